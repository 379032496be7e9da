// Tracing through the built `spool run` (docs/operations.md "Tracing"): one trace from webhook to
// delivery (an ingress request's traceparent → the ingress SERVER span → the stored context → the
// push attempt's CLIENT span, child of and linked to it → the traceparent the push target receives),
// the Pull and Admin API's spans with their route templates, the dequeued item's stored traceparent,
// the metrics and health details; a dead collector never fails ingress and its failures are
// counted; an exporter that cannot start is counted and logged while the server runs.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startReceiver, type Receiver } from "../app/helpers/delivery.js";
import { bearer, call, eventually, pullCall } from "../app/helpers/http.js";
import { freePort, spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "../app/helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "../app/helpers/spoolfile.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { attr, KIND, startCollector, type Collector, type OtlpSpan } from "./helpers/collector.js";

const tmp = makeTempDir("tracing-e2e");
process.on("exit", () => tmp.cleanup());

const INCOMING_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const INCOMING_SPAN = "00f067aa0ba902b7";
const PUBLISH_TRACE = "5bf92f3577b34da6a3ce929d0e0e4736";

async function startSpool(name: string, tracing: string, routes: string): Promise<{ spool: SpoolProcess; base: ReturnType<typeof urls> }> {
  const ports = await freePorts();
  const base = urls(ports);
  const dir = join(tmp.path, name);
  mkdirSync(dir);
  const text = spoolfileText(ports, `defaults { egress { https_only off; dns_rebind_protection off } }\n${routes}`, { observability: tracing });
  const spool = spawnSpool(["run", "--config", writeSpoolfile(dir, text), "--db", join(dir, "spool.db")]);
  await waitHealthy(spool, base.admin);
  return { spool, base };
}

async function metric(base: ReturnType<typeof urls>, name: string): Promise<number> {
  const text = await (await fetch(base.metrics)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : NaN;
}

const trace = suite("spool run with tracing: one trace from webhook to delivery");
let collector: Collector;
let receiver: Receiver;
let running: { spool: SpoolProcess; base: ReturnType<typeof urls> };

trace.before(async () => {
  collector = await startCollector();
  receiver = await startReceiver();
  running = await startSpool(
    "traced",
    `  tracing { enabled on; collector "${collector.url()}"; insecure on }`,
    `/hooks/push { deliver "${receiver.url("/in")}" }\n/hooks/pulled { pull { path /jobs } }\n`,
  );
});

trace.after(async () => {
  await stopSpool(running.spool);
  await receiver.close();
  await collector.close();
});

/** Spans of the run so far, after a graceful stop flushed them (the 5 s batch delay is not waited for). */
let flushed: OtlpSpan[] | undefined;
async function allSpans(): Promise<OtlpSpan[]> {
  if (!flushed) {
    const { code } = await stopSpool(running.spool);
    assert.is(code, 0);
    flushed = collector.spans();
  }
  return flushed;
}

let pushed: { id: string; targetTraceparent: string };
let pulledTraceparent: string;

trace("the push target receives a traceparent of the incoming trace; the dequeued item exposes the stored one", async () => {
  assert.is(await metric(running.base, "spool_tracing_enabled"), 1);
  const accepted = await call(`${running.base.ingress}/hooks/push?sig=abc`, {
    body: '{"n":1}',
    headers: { "content-type": "application/json", traceparent: `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01`, tracestate: "acme=7", "user-agent": "tracing-test/1" },
  });
  assert.is(accepted.status, 202);
  const id = accepted.json.ids[0] as string;
  const delivered = await eventually(() => receiver.requests.find((r) => r.headers["x-spool-message-id"] === id), 15_000, "the push");
  const targetTraceparent = String(delivered.headers.traceparent);
  const [version, traceId, spanId, flags] = targetTraceparent.split("-");
  assert.equal([version, traceId, flags], ["00", INCOMING_TRACE, "01"]);
  assert.is.not(spanId, INCOMING_SPAN, "the client span's own id, replacing the stored header");
  assert.is(delivered.headers.tracestate, "acme=7");
  pushed = { id, targetTraceparent };

  // Pull: the stored traceparent (the ingress span's) is on the dequeued item.
  assert.is((await call(`${running.base.ingress}/hooks/pulled`, { body: "{}", headers: { traceparent: `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01` } })).status, 202);
  const { items } = (await pullCall(`${running.base.pull}/jobs`, "dequeue", "pull-token", { batch: 1 })).json;
  assert.is(items.length, 1);
  assert.is(items[0].trace.path, "/hooks/pulled");
  assert.is(items[0].trace.remote_addr, "127.0.0.1");
  assert.match(items[0].trace.traceparent, new RegExp(`^00-${INCOMING_TRACE}-[0-9a-f]{16}-01$`));
  pulledTraceparent = items[0].trace.traceparent;
  assert.is((await pullCall(`${running.base.pull}/jobs`, "ack", "pull-token", { lease_id: items[0].lease_id })).status, 204);

  // Health details say tracing runs.
  const details = (await call(`${running.base.admin}/healthz?details=1`, { method: "GET", headers: bearer("admin-token") })).json;
  assert.equal(details.diagnostics.tracing, { enabled: true, init_failures_total: 0, export_errors_total: 0, spans_dropped_total: 0 });
  // A message published through the Admin API continues that call's trace.
  const published = await call(`${running.base.admin}/messages/publish`, {
    headers: { ...bearer("admin-token"), "X-Spool-Audit-Reason": "trace test", traceparent: `00-${PUBLISH_TRACE}-${INCOMING_SPAN}-01` },
    body: JSON.stringify({ items: [{ id: "published-1", route: "/hooks/push", payload_b64: "" }] }),
  });
  assert.is(published.status, 200, published.text);
  const publishedPush = await eventually(() => receiver.requests.find((r) => r.headers["x-spool-message-id"] === "published-1"), 15_000, "the published push");
  assert.match(String(publishedPush.headers.traceparent), new RegExp(`^00-${PUBLISH_TRACE}-`));
  // An Admin API call with a route template.
  assert.is((await call(`${running.base.admin}/applications/app1/endpoints/ep1`, { method: "GET", headers: bearer("admin-token") })).status, 404);
});

trace("the collector gets the ingress SERVER span (child of the incoming one) and the CLIENT span (its child, linked to it)", async () => {
  const spans = await allSpans();
  const ingress = spans.find((s) => s.name === "ingress" && attr(s, "spool.route") === "/hooks/push")!;
  assert.ok(ingress, "an ingress span");
  assert.is(ingress.kind, KIND.SERVER);
  assert.is(ingress.traceId, INCOMING_TRACE);
  assert.is(ingress.parentSpanId, INCOMING_SPAN);
  assert.is(ingress.traceState, "acme=7");
  assert.is(attr(ingress, "http.request.method"), "POST");
  assert.is(attr(ingress, "url.path"), "/hooks/push", "no query");
  assert.is(attr(ingress, "url.scheme"), "http");
  assert.is(attr(ingress, "server.port"), Number(new URL(running.base.ingress).port));
  assert.is(attr(ingress, "client.address"), "127.0.0.1");
  assert.is(attr(ingress, "user_agent.original"), "tracing-test/1");
  assert.is(attr(ingress, "http.response.status_code"), 202);
  assert.is(attr(ingress, "http.route"), "/hooks/push");
  assert.is(ingress.status.code, 0);

  const push = spans.find((s) => s.name === "POST" && attr(s, "spool.message_id") === pushed.id)!;
  assert.ok(push, "a push span");
  assert.is(push.kind, KIND.CLIENT);
  assert.is(push.traceId, INCOMING_TRACE);
  assert.is(push.parentSpanId, ingress.spanId);
  assert.equal(push.links.map((l) => [l.traceId, l.spanId]), [[INCOMING_TRACE, ingress.spanId]]);
  assert.is(`00-${push.traceId}-${push.spanId}-01`, pushed.targetTraceparent, "the target got the client span's traceparent");
  assert.is(attr(push, "url.full"), receiver.url("/in"));
  assert.is(attr(push, "server.address"), "127.0.0.1");
  assert.is(attr(push, "server.port"), receiver.port);
  assert.is(attr(push, "http.response.status_code"), 200);
  assert.is(attr(push, "spool.route"), "/hooks/push");
  assert.is(attr(push, "spool.attempt"), 1);
  assert.is(attr(push, "spool.outcome"), "acked");

  const publish = spans.find((s) => s.name === "admin_api" && attr(s, "http.route") === "/messages/publish")!;
  assert.is(publish.traceId, PUBLISH_TRACE);
  const publishedPush = spans.find((s) => s.name === "POST" && attr(s, "spool.message_id") === "published-1")!;
  assert.is(publishedPush.parentSpanId, publish.spanId, "a published message's push is a child of the publish call's span");

  const pulledIngress = spans.find((s) => s.name === "ingress" && attr(s, "spool.route") === "/hooks/pulled")!;
  assert.is(`00-${pulledIngress.traceId}-${pulledIngress.spanId}-01`, pulledTraceparent, "the dequeued item's traceparent is the ingress span's");
});

trace("Pull and Admin API spans name their route templates; health probes are traced, scrapes are not", async () => {
  const spans = await allSpans();
  const pull = spans.filter((s) => s.name === "pull_api");
  assert.equal(pull.map((s) => attr(s, "http.route")).sort(), ["/jobs/ack", "/jobs/dequeue"]);
  for (const span of pull) {
    assert.is(span.kind, KIND.SERVER);
    assert.is(attr(span, "spool.route"), undefined);
    assert.ok([200, 204].includes(attr(span, "http.response.status_code") as number));
  }
  const admin = spans.filter((s) => s.name === "admin_api");
  const endpoint = admin.find((s) => attr(s, "url.path") === "/applications/app1/endpoints/ep1")!;
  assert.is(attr(endpoint, "http.route"), "/applications/{application}/endpoints/{endpoint_name}");
  assert.is(attr(endpoint, "http.response.status_code"), 404);
  assert.is(endpoint.status.code, 0, "a 4xx is not a server error");
  const health = admin.filter((s) => attr(s, "url.path") === "/healthz");
  assert.ok(health.length > 0);
  for (const span of health) assert.is(attr(span, "http.route"), "/healthz");
  assert.not.ok(spans.some((s) => String(attr(s, "url.path")).includes("metrics")));
  for (const span of spans) for (const a of span.attributes) assert.not.match(JSON.stringify(a.value), /admin-token|pull-token|"n":1/);
});

trace.run();

const failing = suite("spool run with a dead collector, and with an exporter that cannot start");

failing("a dead collector never fails ingress; its failed exports are counted and logged", async () => {
  const deadPort = await freePort();
  const { spool, base } = await startSpool("dead", `  tracing { enabled on; collector "http://127.0.0.1:${deadPort}"; insecure on }`, `/hooks/a { pull { path /a } }\n`);
  try {
    const statuses = await Promise.all(Array.from({ length: 40 }, () => call(`${base.ingress}/hooks/a`, { body: "{}" }).then((r) => r.status)));
    assert.equal(new Set(statuses), new Set([202]));
    assert.is(await metric(base, "spool_tracing_enabled"), 1);
    // The batch leaves at most 5 s after its first span ended; waited for, not timed.
    const errors = await eventually(async () => ((await metric(base, "spool_tracing_export_errors_total")) >= 1 ? metric(base, "spool_tracing_export_errors_total") : undefined), 20_000, "an export error");
    assert.ok(errors >= 1);
    await spool.waitForOutput('"msg":"tracing_export_failed"');
    const line = JSON.parse(spool.output().split("\n").find((l) => l.includes('"msg":"tracing_export_failed"'))!);
    assert.match(line.reason, /ECONNREFUSED/);
    assert.ok(line.spans >= 40, "the 40 ingress spans (and the health probes) in the failed batch");
    assert.is((await call(`${base.ingress}/hooks/a`, { body: "{}" })).status, 202);
  } finally {
    await stopSpool(spool);
  }
});

failing("an unreadable ca_file: init failure counted and logged, tracing off, the server runs", async () => {
  const missing = join(tmp.path, "no-such-ca.pem");
  const { spool, base } = await startSpool("init", `  tracing { enabled on; collector "https://127.0.0.1:1"; tls { ca_file "${missing}" } }`, `/hooks/a { pull { path /a } }\n`);
  try {
    assert.is(await metric(base, "spool_tracing_init_failures_total"), 1);
    assert.is(await metric(base, "spool_tracing_enabled"), 0);
    await spool.waitForOutput('"msg":"tracing_init_failed"');
    assert.match(spool.output(), /no-such-ca\.pem cannot be read/);
    const details = (await call(`${base.admin}/healthz?details=1`, { method: "GET", headers: bearer("admin-token") })).json;
    assert.is(details.diagnostics.tracing.enabled, false);
    assert.is(details.diagnostics.tracing.init_failures_total, 1);
    const accepted = await call(`${base.ingress}/hooks/a`, { body: "{}", headers: { traceparent: `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01` } });
    assert.is(accepted.status, 202);
    const { items } = (await pullCall(`${base.pull}/a`, "dequeue", "pull-token", {})).json;
    assert.equal(Object.keys(items[0].trace).sort(), ["path", "remote_addr"], "tracing off: no traceparent stored");
    assert.is(items[0].headers.Traceparent ?? items[0].headers.traceparent, `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01`, "the sender's header is kept as sent");
  } finally {
    await stopSpool(spool);
  }
});

failing.run();
