// The exporter against a fake collector (node:http and node:https servers in this process): every
// `tracing { … }` directive as compiled from Spoolfile text, the OTLP JSON it sends, gzip, headers,
// url_path, TLS with a per-run CA and a client certificate, a CONNECT proxy, retries, a dead
// collector and the queue cap (counted), and an exporter that cannot be built (docs/operations.md "Tracing").
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile, type TracingConfig } from "../../compiler/index.js";
import { restartRequiredChanges } from "../../runtime/reload/policy.js";
import { startTracing, type ExportFailure, type Tracing } from "../../runtime/tracing/tracing.js";
import { freePort } from "../app/helpers/spool-process.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { makeTlsMaterial } from "../helpers/tls-material.js";
import { attr, KIND, startCollector, type Collector } from "./helpers/collector.js";
import { startConnectProxy } from "./helpers/proxy.js";

const tls = makeTlsMaterial();
const tmp = makeTempDir("tracing-export");
process.on("exit", () => {
  tls.cleanup();
  tmp.cleanup();
});

/** The IR of `observability { tracing { … } }`, compiled like any Spoolfile (errors fail the test). */
function tracingConfig(block: string): TracingConfig {
  const result = compileSpoolfile(`observability {\n  tracing {\n${block}\n  }\n}\n`, "tracing.spool", { env: {} });
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  assert.equal(errors, [], "the tracing block compiles");
  return result.config!.observability.tracing;
}

interface Reports {
  inits: unknown[];
  failures: ExportFailure[];
  dropped: number;
}

function start(config: TracingConfig): { tracing: Tracing; reports: Reports } {
  const reports: Reports = { inits: [], failures: [], dropped: 0 };
  const tracing = startTracing(config, {
    version: "9.9.9-test",
    onInitFailure: (error) => reports.inits.push(error),
    onExportFailure: (failure) => reports.failures.push(failure),
    onDropped: (spans) => (reports.dropped += spans),
  });
  return { tracing, reports };
}

/** Ends `count` push spans at once (each is one CLIENT span). */
function pushSpans(tracing: Tracing, count: number, stored: Record<string, string> | null = null): void {
  for (let i = 0; i < count; i++) {
    const span = tracing.startPush({ url: "https://user:secret@target.example:8443/in?token=abc&x=1", route: "/hooks/a", messageId: `evt_${i}`, attempt: 1, stored });
    span!.end({ statusCode: 200, outcome: "acked", endedAtMs: Date.now() });
  }
}

const exporter = suite("tracing exporter");
let plain: Collector;

exporter.before(async () => {
  plain = await startCollector();
});
exporter.after(() => plain.close());
exporter.before.each(() => {
  plain.requests.length = 0;
  plain.answer = (_, res) => res.writeHead(200).end("{}");
});

exporter("OTLP JSON to /v1/traces: resource, scope, a CLIENT span with its attributes; flushed at shutdown", async () => {
  const { tracing, reports } = start(tracingConfig(`enabled on\ncollector "${plain.url()}"\ninsecure on`));
  assert.ok(tracing.enabled);
  pushSpans(tracing, 1);
  await tracing.shutdown(5_000);
  assert.is(plain.requests.length, 1);
  const [request] = plain.requests;
  assert.is(request.path, "/v1/traces");
  assert.is(request.headers["content-type"], "application/json");
  assert.is(request.headers["content-encoding"], undefined);
  const resource = request.json.resourceSpans[0].resource.attributes;
  assert.equal(resource.find((a) => a.key === "service.name")?.value, { stringValue: "spool" });
  assert.equal(resource.find((a) => a.key === "service.version")?.value, { stringValue: "9.9.9-test" });
  assert.is(request.json.resourceSpans[0].scopeSpans[0].scope.name, "spool");
  const [span] = plain.spans();
  assert.is(span.name, "POST");
  assert.is(span.kind, KIND.CLIENT);
  assert.match(span.traceId, /^[0-9a-f]{32}$/);
  assert.match(span.spanId, /^[0-9a-f]{16}$/);
  assert.is(span.parentSpanId, undefined, "no stored context: a root span");
  assert.equal(span.links, []);
  assert.is(attr(span, "http.request.method"), "POST");
  assert.is(attr(span, "url.full"), "https://target.example:8443/in?token=(redacted)&x=(redacted)", "no userinfo, query values redacted");
  assert.is(attr(span, "server.address"), "target.example");
  assert.is(attr(span, "server.port"), 8443);
  assert.is(attr(span, "http.response.status_code"), 200);
  assert.is(attr(span, "spool.route"), "/hooks/a");
  assert.is(attr(span, "spool.message_id"), "evt_0");
  assert.is(attr(span, "spool.attempt"), 1);
  assert.is(attr(span, "spool.outcome"), "acked");
  assert.is(span.status.code, 0);
  assert.ok(BigInt(span.endTimeUnixNano) >= BigInt(span.startTimeUnixNano));
  assert.equal(reports, { inits: [], failures: [], dropped: 0 });
});

exporter("a push span continues a stored context: its child, linked to it, sending its own traceparent", async () => {
  const { tracing } = start(tracingConfig(`enabled on\ncollector "${plain.url()}"\ninsecure on`));
  const stored = { remote_addr: "127.0.0.1", path: "/hooks/a", traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: "vendor=1" };
  const span = tracing.startPush({ url: "http://127.0.0.1:1/in", route: "/hooks/a", messageId: "evt_1", attempt: 3, stored })!;
  const [, traceId, spanId, flags] = span.headers.traceparent.split("-");
  assert.is(traceId, "0af7651916cd43dd8448eb211c80319c");
  assert.is.not(spanId, "b7ad6b7169203331");
  assert.is(flags, "01");
  assert.is(span.headers.tracestate, "vendor=1");
  span.end({ statusCode: 503, outcome: "retry", endedAtMs: Date.now() });
  const failed = tracing.startPush({ url: "http://127.0.0.1:1/in", route: "/hooks/a", messageId: "evt_2", attempt: 1, stored: null })!;
  failed.end({ error: "ECONNREFUSED connect ECONNREFUSED 127.0.0.1:1", outcome: "retry", endedAtMs: Date.now() });
  await tracing.shutdown(5_000);
  const [child, root] = plain.spans();
  assert.is(child.traceId, "0af7651916cd43dd8448eb211c80319c");
  assert.is(child.spanId, spanId);
  assert.is(child.parentSpanId, "b7ad6b7169203331");
  assert.equal(child.links.map((l) => [l.traceId, l.spanId]), [["0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"]]);
  assert.is(attr(child, "spool.attempt"), 3);
  assert.is(attr(child, "error.type"), "503");
  assert.is(child.status.code, 2, "status ≥ 400 is ERROR");
  assert.is(attr(root, "error.type"), "ECONNREFUSED");
  assert.is(attr(root, "http.response.status_code"), undefined);
  assert.is(root.status.code, 2, "a network error is ERROR");
});

exporter("an unsampled stored context (flag 00) is propagated, never recorded", async () => {
  const { tracing } = start(tracingConfig(`enabled on\ncollector "${plain.url()}"\ninsecure on`));
  const span = tracing.startPush({ url: "http://127.0.0.1:1/in", route: "/a", messageId: "e", attempt: 1, stored: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00" } })!;
  assert.match(span.headers.traceparent, /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/);
  span.end({ statusCode: 200, outcome: "acked", endedAtMs: Date.now() });
  await tracing.shutdown(5_000);
  assert.is(plain.requests.length, 0);
});

exporter("compression gzip, header directives, url_path, userinfo as Basic auth", async () => {
  const { tracing } = start(
    tracingConfig(`enabled on\ncollector "http://otel:s3cret@127.0.0.1:${plain.port}/ignored?q=1"\ninsecure on\ncompression gzip\nurl_path /custom/traces\nheader "X-Scope-OrgID" "tenant-a"\nheader "X-Api-Key" "k1"`),
  );
  pushSpans(tracing, 3);
  await tracing.shutdown(5_000);
  const [request] = plain.requests;
  assert.is(request.path, "/custom/traces");
  assert.is(request.headers["content-encoding"], "gzip");
  assert.equal([...request.raw.subarray(0, 2)], [0x1f, 0x8b], "the body is gzip");
  assert.is(request.headers["x-scope-orgid"], "tenant-a");
  assert.is(request.headers["x-api-key"], "k1");
  assert.is(request.headers.authorization, `Basic ${Buffer.from("otel:s3cret").toString("base64")}`);
  assert.is(plain.spans().length, 3);
});

exporter("the collector URL's own path is used when url_path is not written", async () => {
  const { tracing } = start(tracingConfig(`enabled on\ncollector "${plain.url("/otlp/v1/traces")}"\ninsecure on`));
  pushSpans(tracing, 1);
  await tracing.shutdown(5_000);
  assert.is(plain.requests[0].path, "/otlp/v1/traces");
});

exporter("retry on: a 503 is retried after initial_interval and the 200 ends it; nothing counted", async () => {
  let answered = 0;
  plain.answer = (_, res) => res.writeHead(answered++ === 0 ? 503 : 200).end("{}");
  const { tracing, reports } = start(tracingConfig(`enabled on\ncollector "${plain.url()}"\ninsecure on\nretry { enabled on; initial_interval 20ms; max_interval 50ms; max_elapsed_time 10s }`));
  pushSpans(tracing, 2);
  await tracing.shutdown(5_000);
  assert.is(plain.requests.length, 2, "sent twice");
  assert.equal(plain.requests[0].json, plain.requests[1].json, "the same batch again");
  assert.equal(reports.failures, []);
});

exporter("retry on: a 429's Retry-After is honoured over initial_interval", async () => {
  let answered = 0;
  plain.answer = (_, res) => (answered++ === 0 ? res.writeHead(429, { "retry-after": "0" }).end("{}") : res.writeHead(200).end("{}"));
  // initial_interval 1m: without the Retry-After the retry would come after shutdown's deadline.
  const { tracing, reports } = start(tracingConfig(`enabled on\ncollector "${plain.url()}"\ninsecure on\nretry { enabled on; initial_interval 1m; max_interval 1m; max_elapsed_time 5m }`));
  pushSpans(tracing, 1);
  await tracing.shutdown(5_000);
  assert.is(plain.requests.length, 2);
  assert.equal(reports.failures, []);
});

exporter("retry on: a 400 is not retried; each finally failed export is reported once", async () => {
  plain.answer = (_, res) => res.writeHead(400).end("{}");
  const { tracing, reports } = start(tracingConfig(`enabled on\ncollector "${plain.url()}"\ninsecure on\nretry { enabled on; initial_interval 10ms }`));
  pushSpans(tracing, 1);
  await tracing.shutdown(5_000);
  assert.is(plain.requests.length, 1);
  assert.equal(reports.failures, [{ reason: "the collector answered 400", spans: 1, attempts: 1 }]);
});

exporter("retry off (the default): a 503 is dropped at once and reported", async () => {
  plain.answer = (_, res) => res.writeHead(503).end("{}");
  const { tracing, reports } = start(tracingConfig(`enabled on\ncollector "${plain.url()}"\ninsecure on`));
  pushSpans(tracing, 1);
  await tracing.shutdown(5_000);
  assert.is(plain.requests.length, 1);
  assert.equal(reports.failures, [{ reason: "the collector answered 503", spans: 1, attempts: 1 }]);
});

exporter("retry gives up at max_elapsed_time: one failure reported after several attempts", async () => {
  plain.answer = (_, res) => res.writeHead(502).end("{}");
  const { tracing, reports } = start(tracingConfig(`enabled on\ncollector "${plain.url()}"\ninsecure on\nretry { enabled on; initial_interval 10ms; max_interval 20ms; max_elapsed_time 200ms }`));
  pushSpans(tracing, 1);
  await tracing.shutdown(5_000);
  assert.ok(plain.requests.length >= 3, `retried (${plain.requests.length} requests)`);
  assert.is(reports.failures.length, 1);
  assert.is(reports.failures[0].attempts, plain.requests.length);
});

exporter("a dead collector: every export fails and is counted, spans never wait on it", async () => {
  const port = await freePort();
  const { tracing, reports } = start(tracingConfig(`enabled on\ncollector "http://127.0.0.1:${port}"\ninsecure on`));
  pushSpans(tracing, 1030); // two full batches go at once, the rest at shutdown
  await tracing.shutdown(5_000);
  assert.is(reports.failures.length, 3);
  assert.equal(
    reports.failures.map((f) => f.spans),
    [512, 512, 6],
  );
  assert.match(reports.failures[0].reason, /ECONNREFUSED/);
  assert.is(reports.dropped, 0);
});

exporter("timeout bounds one export: a collector that holds the request is given up on and reported", async () => {
  plain.answer = () => {}; // held
  const { tracing, reports } = start(tracingConfig(`enabled on\ncollector "${plain.url()}"\ninsecure on\ntimeout 100ms`));
  pushSpans(tracing, 1);
  await tracing.shutdown(10_000);
  assert.is(plain.requests.length, 1);
  assert.equal(reports.failures, [{ reason: "timeout after 100 ms", spans: 1, attempts: 1 }]);
});

exporter("a collector that never answers: at most 2048 spans wait, the rest are dropped and counted", async () => {
  plain.answer = () => {}; // held
  const { tracing, reports } = start(tracingConfig(`enabled on\ncollector "${plain.url()}"\ninsecure on\ntimeout 30s`));
  pushSpans(tracing, 600); // 512 leave at once (and hang); 88 wait
  pushSpans(tracing, 2100); // the queue fills to 2048; 140 are dropped
  assert.is(reports.dropped, 140);
  await tracing.shutdown(200); // the deadline cuts the export off: what still waits is dropped too
  assert.is(reports.dropped, 140 + 2048);
  assert.is(reports.failures.length, 1, "the hung export is reported");
});

exporter.run();

const secure = suite("tracing exporter over TLS and a CONNECT proxy");
let tlsCollector: Collector;
let mtlsCollector: Collector;

secure.before(async () => {
  tlsCollector = await startCollector({ tls: { cert: tls.file("server.pem"), key: tls.file("server.key") } });
  mtlsCollector = await startCollector({ tls: { cert: tls.file("server.pem"), key: tls.file("server.key"), clientCa: tls.file("ca.pem") } });
});
secure.after(async () => {
  await tlsCollector.close();
  await mtlsCollector.close();
});

secure("https with the test CA (ca_file) and server_name", async () => {
  const { tracing, reports } = start(tracingConfig(`enabled on\ncollector "${tlsCollector.url()}"\ntls { ca_file "${tls.file("ca.pem")}"; server_name localhost }`));
  pushSpans(tracing, 1);
  await tracing.shutdown(5_000);
  assert.equal(reports.failures, []);
  assert.is(tlsCollector.spans().length, 1);
});

secure("https without the CA fails verification (reported); insecure_skip_verify sends anyway", async () => {
  const before = tlsCollector.requests.length;
  const strict = start(tracingConfig(`enabled on\ncollector "${tlsCollector.url()}"`));
  pushSpans(strict.tracing, 1);
  await strict.tracing.shutdown(5_000);
  assert.is(strict.reports.failures.length, 1);
  assert.match(strict.reports.failures[0].reason, /certificate/i);
  assert.is(tlsCollector.requests.length, before);
  const lax = start(tracingConfig(`enabled on\ncollector "${tlsCollector.url()}"\ntls { insecure_skip_verify on }`));
  pushSpans(lax.tracing, 1);
  await lax.tracing.shutdown(5_000);
  assert.equal(lax.reports.failures, []);
  assert.is(tlsCollector.requests.length, before + 1);
});

secure("a client certificate (cert_file, key_file) for a collector that requires one", async () => {
  const withCert = start(
    tracingConfig(`enabled on\ncollector "${mtlsCollector.url()}"\ntls { ca_file "${tls.file("ca.pem")}"; cert_file "${tls.file("client.pem")}"; key_file "${tls.file("client.key")}" }`),
  );
  pushSpans(withCert.tracing, 1);
  await withCert.tracing.shutdown(5_000);
  assert.equal(withCert.reports.failures, []);
  assert.is(mtlsCollector.requests.length, 1);
  assert.is(mtlsCollector.requests[0].clientCn, "spool test client");
  const without = start(tracingConfig(`enabled on\ncollector "${mtlsCollector.url()}"\ntls { ca_file "${tls.file("ca.pem")}" }`));
  pushSpans(without.tracing, 1);
  await without.tracing.shutdown(5_000);
  assert.is(without.reports.failures.length, 1, "refused without a client certificate");
  assert.is(mtlsCollector.requests.length, 1);
});

secure("through a CONNECT proxy (userinfo as Proxy-Authorization), the CA still applies inside the tunnel", async () => {
  const proxy = await startConnectProxy();
  try {
    const { tracing, reports } = start(
      tracingConfig(`enabled on\ncollector "${tlsCollector.url()}"\nproxy_url "http://px:pw@127.0.0.1:${proxy.port}"\ncompression gzip\ntls { ca_file "${tls.file("ca.pem")}" }`),
    );
    const before = tlsCollector.requests.length;
    pushSpans(tracing, 2);
    await tracing.shutdown(5_000);
    assert.equal(reports.failures, []);
    assert.is(tlsCollector.requests.length, before + 1);
    assert.is(tlsCollector.requests.at(-1)!.json.resourceSpans[0].scopeSpans[0].spans.length, 2);
    assert.equal(proxy.tunnels.map((t) => t.authority), [`127.0.0.1:${tlsCollector.port}`]);
    assert.is(proxy.tunnels[0].headers["proxy-authorization"], `Basic ${Buffer.from("px:pw").toString("base64")}`);
    // Without the CA the tunnel opens but the collector's certificate is refused.
    const strict = start(tracingConfig(`enabled on\ncollector "${tlsCollector.url()}"\nproxy_url "http://127.0.0.1:${proxy.port}"`));
    pushSpans(strict.tracing, 1);
    await strict.tracing.shutdown(5_000);
    assert.is(strict.reports.failures.length, 1);
    assert.is(proxy.tunnels.length, 2);
  } finally {
    await proxy.close();
  }
});

secure("plain http through the proxy is tunnelled too", async () => {
  const proxy = await startConnectProxy();
  const collector = await startCollector();
  try {
    const { tracing, reports } = start(tracingConfig(`enabled on\ncollector "${collector.url()}"\ninsecure on\nproxy_url "http://127.0.0.1:${proxy.port}"`));
    pushSpans(tracing, 1);
    await tracing.shutdown(5_000);
    assert.equal(reports.failures, []);
    assert.is(collector.spans().length, 1);
    assert.equal(proxy.tunnels.map((t) => t.authority), [`127.0.0.1:${collector.port}`]);
  } finally {
    await proxy.close();
    await collector.close();
  }
});

secure.run();

const init = suite("tracing init failures");

init("an unreadable ca_file: reported, tracing off, nothing exported", async () => {
  const unreadable = join(tmp.path, "ca-unreadable.pem");
  writeFileSync(unreadable, "x");
  chmodSync(unreadable, 0o000);
  const missing = join(tmp.path, "missing.pem");
  for (const path of [missing, ...(process.getuid?.() === 0 ? [] : [unreadable])]) {
    const { tracing, reports } = start(tracingConfig(`enabled on\ncollector "https://127.0.0.1:1"\ntls { ca_file "${path}" }`));
    assert.is(tracing.enabled, false);
    assert.is(reports.inits.length, 1);
    assert.match(String(reports.inits[0]), new RegExp(`ca_file ${path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} cannot be read`));
    assert.is(tracing.startPush({ url: "http://x/", route: "/a", messageId: "e", attempt: 1, stored: null }), undefined);
  }
});

init("a ca_file that is not PEM, and a cert_file without its key_file: reported", () => {
  const garbage = join(tmp.path, "garbage.pem");
  writeFileSync(garbage, "not a certificate\n");
  for (const block of [`tls { ca_file "${garbage}" }`, `tls { cert_file "${tls.file("client.pem")}" }`]) {
    const { tracing, reports } = start(tracingConfig(`enabled on\ncollector "https://127.0.0.1:1"\n${block}`));
    assert.is(tracing.enabled, false, block);
    assert.is(reports.inits.length, 1, block);
  }
});

init("a tracing change needs a restart: a reload naming it is refused, whole", () => {
  const base = compileSpoolfile("pull_api { auth token raw:t }\n/a { pull { path /a } }\n", "a.spool", { env: {} }).config!;
  const traced = compileSpoolfile('pull_api { auth token raw:t }\n/a { pull { path /a } }\nobservability { tracing { enabled on; collector "https://otel.example" } }\n', "b.spool", { env: {} }).config!;
  assert.equal(restartRequiredChanges(base, traced), ["observability.tracing"]);
  assert.equal(restartRequiredChanges(traced, traced), []);
});

init("tracing off builds nothing", () => {
  const { tracing, reports } = start(tracingConfig(`enabled off`));
  assert.is(tracing.enabled, false);
  assert.equal(reports.inits, []);
});

init.run();
