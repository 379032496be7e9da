// The delivery service end to end: Spoolfile text → IR → dispatcher → a real SQLite store, with real
// HTTP receivers on 127.0.0.1 and real programs. Outcomes are polled with a deadline, never slept for.
import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile } from "../../compiler/index.js";
import type { SpoolConfig } from "../../compiler/ir.js";
import { systemClock } from "../../runtime/time/clock.js";
import { createDeliveryService, type DeliveryService } from "../../runtime/delivery/service.js";
import { dispatcherConfigFromIr } from "../../runtime/delivery/from-ir.js";
import { createRuntimeLogger } from "../../runtime/observability/log.js";
import { createMetrics, type SpoolMetrics } from "../../runtime/observability/metrics.js";
import { openStore } from "../../runtime/store/open.js";
import type { Store } from "../../runtime/store/store.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { startReceiver, type Receiver } from "./helpers.js";

const localEgress = `defaults {
  egress {
    https_only off
    dns_rebind_protection off
  }
}
`;
const fastRetry = "retry exponential max 3 base 50ms cap 100ms jitter 0";

function compile(text: string, env: Record<string, string> = {}): SpoolConfig {
  const result = compileSpoolfile(text, "Spoolfile", { env });
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  assert.equal(errors.map((d) => d.message), []);
  assert.ok(result.config);
  return result.config;
}

interface Harness {
  readonly store: Store;
  readonly service: DeliveryService;
  readonly metrics: SpoolMetrics;
  readonly dir: string;
  /** Runtime log lines (at the harness's level and up, debug unless told), parsed. */
  readonly logLines: Record<string, unknown>[];
  enqueue(id: string, target: string, body: string | Buffer, headers?: Record<string, string>): Promise<void>;
  close(): Promise<void>;
}

async function harness(logLevel: "debug" | "info" = "debug"): Promise<Harness> {
  const temp = makeTempDir("delivery-service");
  const store = await openStore({ backend: "sqlite", sqlitePath: join(temp.path, "spool.db") }, { clock: systemClock });
  const metrics = createMetrics({
    backend: "sqlite",
    version: "test",
    clock: systemClock,
    queueSnapshot: async () => ({ depth: { queued: 0, leased: 0, dead: 0 }, oldestQueuedAgeSeconds: 0, readyLagSeconds: 0, leasesActiveByRoute: {} }),
  });
  const logLines: Record<string, unknown>[] = [];
  const log = createRuntimeLogger({
    level: logLevel,
    output: { kind: "stderr" },
    clock: systemClock,
    sink: { write: (line) => void logLines.push(JSON.parse(line)), close: async () => {} },
  });
  const service = createDeliveryService({ store, clock: systemClock, getMetrics: () => metrics.delivery, log });
  let closed = false;
  return {
    store,
    service,
    metrics,
    dir: temp.path,
    logLines,
    enqueue: (id, target, body, headers = { "Content-Type": "application/json" }) =>
      store.enqueue([{ id, route: "/hooks", target, payload: typeof body === "string" ? Buffer.from(body) : body, headers }]),
    async close() {
      if (closed) return;
      closed = true;
      await service.stop({ drainMs: 1_000 });
      await store.close();
      temp.cleanup();
    },
  };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, deadlineMs = 10_000): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}

/** The dispatcher counts an attempt after recording it and settling its lease: waiting on the counter waits for both. */
async function delivered(metrics: SpoolMetrics, outcome: "acked" | "dead", count = 1): Promise<void> {
  await waitFor(`${count} ${outcome} deliveries settled`, async () => ((await counterValue(metrics, outcome)) >= count ? true : undefined));
}

async function counterValue(metrics: SpoolMetrics, name: "attempts" | "acked" | "retry" | "dead"): Promise<number> {
  return (await metrics.delivery[name].get()).values[0]?.value ?? 0;
}

async function deadByReason(metrics: SpoolMetrics, reason: string): Promise<number> {
  return (await metrics.delivery.deadByReason.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

async function attemptsOf(store: Store, messageId: string) {
  // Newest first from the store; oldest first reads better in assertions.
  return (await store.listAttempts({ messageId, limit: 100 })).reverse();
}

const test = suite("delivery service (IR → dispatcher → SQLite store)");

let receivers: Receiver[] = [];
let harnesses: Harness[] = [];
async function receiver(handler?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(handler);
  receivers.push(r);
  return r;
}
async function open(logLevel?: "debug" | "info"): Promise<Harness> {
  const h = await harness(logLevel);
  harnesses.push(h);
  return h;
}

test.after.each(async () => {
  for (const h of harnesses) await h.close();
  for (const r of receivers) await r.close();
  harnesses = [];
  receivers = [];
});

test("push delivers the exact stored body with stored, target and Spool headers, then acks", async () => {
  const rx = await receiver();
  const url = `${rx.url}/in`;
  const h = await open();
  h.service.start(compile(`${localEgress}/hooks {\n  deliver "${url}" {\n    header "X-Custom" "custom-value"\n  }\n}\n`));
  const body = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x31, 0x7d, 0x0a, 0xff, 0x00, 0xfe]);
  await h.enqueue("evt_exact", url, body, { "Content-Type": "application/json", "X-Source": "origin" });

  await delivered(h.metrics, "acked");
  assert.equal(rx.requests.length, 1);
  const [request] = rx.requests;
  assert.equal(request.path, "/in");
  assert.ok(request.body.equals(body));
  assert.equal(request.headers["x-spool-message-id"], "evt_exact");
  assert.equal(request.headers["x-spool-attempt"], "1");
  assert.equal(request.headers["x-custom"], "custom-value");
  assert.equal(request.headers["x-source"], "origin");
  assert.equal(request.headers["content-type"], "application/json");
  const attempts = await attemptsOf(h.store, "evt_exact");
  assert.equal(attempts.map((a) => [a.attempt, a.outcome, a.statusCode, a.route, a.target]), [[1, "acked", 200, "/hooks", url]]);
  assert.equal(await h.store.listMessages({ route: "/hooks", state: "queued", limit: 10 }), []);
  assert.equal(await h.store.listMessages({ route: "/hooks", state: "leased", limit: 10 }), []);
  assert.equal(await counterValue(h.metrics, "acked"), 1);
  assert.equal(await counterValue(h.metrics, "retry"), 0);
});

test("500 then 200 is delivered on attempt 2 with the retry and the ack recorded", async () => {
  const rx = await receiver((_req, res, index) => {
    res.statusCode = index === 0 ? 500 : 200;
    res.end();
  });
  const h = await open();
  h.service.start(compile(`${localEgress}/hooks {\n  deliver "${rx.url}" {\n    ${fastRetry}\n  }\n}\n`));
  await h.enqueue("evt_retry", rx.url, "{}");

  await delivered(h.metrics, "acked");
  const attempts = await attemptsOf(h.store, "evt_retry");
  assert.equal(attempts.map((a) => [a.attempt, a.outcome, a.statusCode]), [
    [1, "retry", 500],
    [2, "acked", 200],
  ]);
  assert.equal(rx.requests.map((r) => r.headers["x-spool-attempt"]), ["1", "2"]);
  assert.equal(await counterValue(h.metrics, "attempts"), 2);
  assert.equal(await counterValue(h.metrics, "retry"), 1);
  assert.equal(await counterValue(h.metrics, "acked"), 1);
  assert.equal(await counterValue(h.metrics, "dead"), 0);
});

test("400 is dead at once with no_retry, without a second request", async () => {
  const rx = await receiver((_req, res) => {
    res.statusCode = 400;
    res.end("bad");
  });
  const h = await open();
  h.service.start(compile(`${localEgress}/hooks {\n  deliver "${rx.url}" {\n    ${fastRetry}\n  }\n}\n`));
  await h.enqueue("evt_dead", rx.url, "{}");

  await delivered(h.metrics, "dead");
  const [dead] = await waitFor("dead message", async () => {
    const list = await h.store.listMessages({ route: "/hooks", state: "dead", limit: 10 });
    return list.length > 0 ? list : undefined;
  });
  assert.equal([dead.id, dead.deadReason, dead.attempt], ["evt_dead", "no_retry", 1]);
  const attempts = await attemptsOf(h.store, "evt_dead");
  assert.equal(attempts.map((a) => [a.attempt, a.outcome, a.statusCode, a.deadReason]), [[1, "dead", 400, "no_retry"]]);
  assert.equal(rx.requests.length, 1);
  assert.equal(await deadByReason(h.metrics, "no_retry"), 1);
  assert.equal(await counterValue(h.metrics, "retry"), 0);
});

test("fan-out: each of two targets receives its message once", async () => {
  const a = await receiver();
  const b = await receiver();
  const h = await open();
  h.service.start(compile(`${localEgress}/hooks {\n  deliver "${a.url}/a"\n  deliver "${b.url}/b"\n}\n`));
  await h.enqueue("evt_fan_a", `${a.url}/a`, "fan");
  await h.enqueue("evt_fan_b", `${b.url}/b`, "fan");

  await delivered(h.metrics, "acked", 2);
  assert.equal(a.requests.map((r) => [r.path, r.headers["x-spool-message-id"], r.body.toString()]), [["/a", "evt_fan_a", "fan"]]);
  assert.equal(b.requests.map((r) => [r.path, r.headers["x-spool-message-id"], r.body.toString()]), [["/b", "evt_fan_b", "fan"]]);
});

test("a signed target's signature verifies with an independent HMAC over method, path, timestamp and body hash", async () => {
  const rx = await receiver();
  const url = `${rx.url}/signed?x=1`;
  const h = await open();
  h.service.start(compile(`${localEgress}/hooks {\n  deliver "${url}" {\n    sign hmac env:OUT_SECRET\n  }\n}\n`, { OUT_SECRET: "topsecret" }));
  const body = '{"signed":true}';
  await h.enqueue("evt_signed", url, body);

  await waitFor("request", () => rx.requests[0]);
  const request = rx.requests[0];
  const timestamp = String(request.headers["x-spool-timestamp"]);
  assert.match(timestamp, /^\d+$/);
  const bodyHash = createHash("sha256").update(body).digest("hex");
  const expected = createHmac("sha256", "topsecret").update(`POST\n/signed\n${timestamp}\n${bodyHash}`).digest("hex");
  assert.equal(request.headers["x-spool-signature"], expected);
});

test("a target whose only secret is unreadable is retried, never sent unsigned", async () => {
  const rx = await receiver();
  const h = await open();
  const config = compile(`${localEgress}/hooks {\n  deliver "${rx.url}" {\n    ${fastRetry}\n    sign hmac env:MISSING_SECRET\n  }\n}\n`);
  h.service.start(config);
  await h.enqueue("evt_unsigned", rx.url, "{}");

  await waitFor("retry recorded", async () => (await attemptsOf(h.store, "evt_unsigned")).find((a) => a.outcome === "retry"));
  assert.equal(rx.requests.length, 0);
});

test("exec target gets the payload bytes on stdin and the Spool environment", async () => {
  const h = await open();
  const out = join(h.dir, "stdin.bin");
  const env = join(h.dir, "env.txt");
  h.service.start(compile(`${localEgress}/hooks {\n  deliver exec "/bin/sh" "-c" "cat > ${out}; echo $SPOOL_MESSAGE_ID $SPOOL_ATTEMPT $EXTRA > ${env}; echo said-hello" {\n    env EXTRA from-config\n  }\n}\n`));
  const body = Buffer.from([0x00, 0x01, 0xff, 0x0a, 0x41, 0x0d, 0x0a]);
  await h.enqueue("evt_exec", "exec:/bin/sh", body);

  await delivered(h.metrics, "acked");
  assert.ok(readFileSync(out).equals(body));
  assert.equal(readFileSync(env, "utf8"), "evt_exec 1 from-config\n");
  const logged = h.logLines.find((line) => line.msg === "delivery attempt" && line.event_id === "evt_exec");
  assert.ok(logged, "the attempt is logged");
  assert.equal([logged.level, logged.component, logged.outcome, logged.stdout], ["debug", "delivery", "acked", "said-hello\n"]);
});

/** The harness's log lines named `msg`. */
function linesNamed(h: Harness, msg: string): Record<string, unknown>[] {
  return h.logLines.filter((line) => line.msg === msg);
}

/** An RFC 3339 UTC timestamp as toISOString writes it. */
function isRfc3339(value: unknown): boolean {
  return typeof value === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) && new Date(value).toISOString() === value;
}

test("at info, a 500 then 200 logs one delivery_retry line with the status and the next attempt time; no payload, header value or query value", async () => {
  const rx = await receiver((_req, res, index) => {
    res.statusCode = index === 0 ? 500 : 200;
    res.end();
  });
  const url = `${rx.url}/in?token=s3cr3t-query-value&plain=`;
  const h = await open("info");
  h.service.start(compile(`${localEgress}/hooks {\n  deliver "${url}" {\n    ${fastRetry}\n    header "X-Custom" "header-value-secret"\n  }\n}\n`));
  await h.enqueue("evt_logged_retry", url, '{"payload":"PAYLOAD-MARKER"}', { "Content-Type": "application/json", "X-Stored": "stored-header-value" });

  await delivered(h.metrics, "acked");
  const retries = linesNamed(h, "delivery_retry");
  assert.equal(retries.length, 1);
  const [retry] = retries;
  assert.equal(
    [retry.level, retry.component, retry.route, retry.target, retry.event_id, retry.attempt, retry.status_code, retry.error],
    ["info", "delivery", "/hooks", `${rx.url}/in?token=(redacted)&plain=`, "evt_logged_retry", 1, 500, "status 500"],
  );
  assert.ok(isRfc3339(retry.next_attempt_at), String(retry.next_attempt_at));
  assert.equal(linesNamed(h, "delivery_dead"), []);
  assert.equal(linesNamed(h, "delivery attempt"), [], "per-attempt lines stay at debug");
  const text = JSON.stringify(h.logLines);
  for (const hidden of ["s3cr3t-query-value", "PAYLOAD-MARKER", "header-value-secret", "stored-header-value"]) assert.not.ok(text.includes(hidden), hidden);
});

test("the log shows a target as written, {vars.X} in its path unexpanded, while the request goes to the expanded URL", async () => {
  const rx = await receiver((_req, res, index) => {
    res.statusCode = index === 0 ? 500 : 200;
    res.end();
  });
  const expanded = `${rx.url}/in/path-secret-value`;
  const h = await open("debug");
  h.service.start(compile(`${localEgress}vars { PATH_TOKEN "path-secret-value" }\n/hooks {\n  deliver "${rx.url}/in/{vars.PATH_TOKEN}" { ${fastRetry} }\n}\n`));
  // The target's identity in the store stays the URL the request goes to.
  await h.enqueue("evt_written_target", expanded, "{}");

  await delivered(h.metrics, "acked");
  assert.equal(rx.requests.map((r) => r.path), ["/in/path-secret-value", "/in/path-secret-value"]);
  const lines = [...linesNamed(h, "delivery_retry"), ...linesNamed(h, "delivery attempt")];
  assert.equal(lines.map((l) => [l.msg, l.target]), [
    ["delivery_retry", `${rx.url}/in/{vars.PATH_TOKEN}`],
    ["delivery attempt", `${rx.url}/in/{vars.PATH_TOKEN}`],
    ["delivery attempt", `${rx.url}/in/{vars.PATH_TOKEN}`],
  ]);
  assert.not.ok(JSON.stringify(h.logLines).includes("path-secret-value"));
});

test("at info, a target failing until its retries run out logs each retry and one delivery_dead warning with attempts, reason and last status", async () => {
  const rx = await receiver((_req, res) => {
    res.statusCode = 503;
    res.end("down");
  });
  const h = await open("info");
  h.service.start(compile(`${localEgress}/hooks {\n  deliver "${rx.url}" {\n    retry exponential max 2 base 20ms cap 40ms jitter 0\n  }\n}\n`));
  await h.enqueue("evt_logged_dead", rx.url, "{}");

  await delivered(h.metrics, "dead");
  assert.equal(linesNamed(h, "delivery_retry").map((line) => [line.attempt, line.status_code]), [[1, 503], [2, 503]]);
  const dead = linesNamed(h, "delivery_dead");
  assert.equal(
    dead.map((line) => [line.level, line.route, line.target, line.event_id, line.attempts, line.dead_reason, line.status_code, line.error]),
    [["warn", "/hooks", rx.url, "evt_logged_dead", 3, "max_retries", 503, "status 503"]],
  );
});

test("at info, a refusal by the egress policy is one delivery_dead warning that says which setting refused it", async () => {
  const rx = await receiver();
  // Behind a placeholder: a literal http:// URL is refused by the compiler already.
  const url = `http://localhost:${rx.port}/hook`;
  const h = await open("info");
  h.service.start(compile(`/hooks {\n  deliver "{env.HOOK_URL}"\n}\n`, { HOOK_URL: url }));
  await h.enqueue("evt_denied", url, "{}");

  await delivered(h.metrics, "dead");
  const dead = linesNamed(h, "delivery_dead");
  assert.equal(dead.map((line) => [line.event_id, line.attempts, line.dead_reason]), [["evt_denied", 1, "policy_denied"]]);
  assert.match(String(dead[0].error), /^egress denied: https_only is on/);
  assert.equal(rx.requests.length, 0);
});

test("at info, an invalid redirect location is logged without the credentials it carries", async () => {
  const locations: Record<string, string> = { "/a": "//u:RedirPw999@[bad", "/b": "http://[bad/x?token%3DRedirTok999", "/c": "http://[bad/x;token=RedirSemi999#access_token=RedirFrag999" };
  const rx = await receiver((req, res) => {
    res.writeHead(302, { location: locations[req.path] }).end();
  });
  const h = await open("info");
  const egress = localEgress.replace("https_only off", "https_only off\n    redirects on");
  h.service.start(compile(`${egress}/hooks {\n  deliver "${rx.url}/a"\n  deliver "${rx.url}/b"\n  deliver "${rx.url}/c"\n}\n`));
  for (const path of ["/a", "/b", "/c"]) await h.enqueue(`evt_redirect${path.slice(1)}`, `${rx.url}${path}`, "{}");

  await delivered(h.metrics, "dead", 3);
  const dead = linesNamed(h, "delivery_dead");
  assert.is(dead.length, 3);
  for (const line of dead) assert.match(String(line.error), /^invalid redirect location /);
  const logged = JSON.stringify(h.logLines);
  for (const secret of ["RedirPw999", "RedirTok999", "RedirSemi999", "RedirFrag999"]) assert.not.ok(logged.includes(secret), `${secret} in ${logged}`);
  assert.ok(logged.includes("//u:(redacted)@[bad"), logged);
});

test("at info, an exec program exiting 3 logs its retry and its death with the first bytes of its stderr as a field", async () => {
  const h = await open("info");
  h.service.start(compile(`${localEgress}/hooks {\n  deliver exec "/bin/sh" "-c" "cat >/dev/null; echo said-on-stdout; echo went-wrong-on-stderr >&2; exit 3" {\n    retry exponential max 1 base 20ms cap 20ms jitter 0\n  }\n}\n`));
  await h.enqueue("evt_exec_fail", "exec:/bin/sh", "PAYLOAD-MARKER");

  await delivered(h.metrics, "dead");
  const [retry] = linesNamed(h, "delivery_retry");
  assert.equal([retry.target, retry.attempt, retry.error, retry.stderr], ["exec:/bin/sh", 1, "exit code 3", "went-wrong-on-stderr\n"]);
  const [dead] = linesNamed(h, "delivery_dead");
  assert.equal([dead.attempts, dead.dead_reason, dead.error, dead.stderr, dead.stderr_truncated], [2, "max_retries", "exit code 3", "went-wrong-on-stderr\n", undefined]);
  const text = JSON.stringify(h.logLines);
  assert.not.ok(text.includes("said-on-stdout"), "stdout stays at debug");
  assert.not.ok(text.includes("PAYLOAD-MARKER"));
});

test("at info, an exec program killed at its timeout logs the timeout with what it wrote to stderr", async () => {
  const h = await open("info");
  h.service.start(compile(`${localEgress}/hooks {\n  deliver exec "/bin/sh" "-c" "cat >/dev/null; echo stuck-waiting >&2; exec sleep 30" {\n    timeout 1s\n    retry exponential max 0 base 20ms cap 20ms jitter 0\n  }\n}\n`));
  await h.enqueue("evt_exec_hang", "exec:/bin/sh", "{}");

  await delivered(h.metrics, "dead");
  const [dead] = linesNamed(h, "delivery_dead");
  assert.equal([dead.event_id, dead.dead_reason, dead.error, dead.stderr], ["evt_exec_hang", "max_retries", "timeout after 1000 ms", "stuck-waiting\n"]);
});

test("an exec program's stderr in the log is cut at 2 KB and says so", async () => {
  const h = await open("info");
  h.service.start(compile(`${localEgress}/hooks {\n  deliver exec "/bin/sh" "-c" "cat >/dev/null; head -c 3000 /dev/zero | tr -c x x >&2; exit 3" {\n    retry exponential max 0 base 20ms cap 20ms jitter 0\n  }\n}\n`));
  await h.enqueue("evt_exec_loud", "exec:/bin/sh", "{}");

  await delivered(h.metrics, "dead");
  const [dead] = linesNamed(h, "delivery_dead");
  assert.equal([dead.stderr, dead.stderr_truncated], ["x".repeat(2048), true]);
});

test("reconfigure to a new target URL delivers new messages there and stops draining the old target", async () => {
  const oldRx = await receiver();
  const newRx = await receiver();
  const h = await open();
  h.service.start(compile(`${localEgress}/hooks {\n  deliver "${oldRx.url}"\n}\n`));
  await h.enqueue("evt_before", oldRx.url, "before");
  await waitFor("old target delivery", () => oldRx.requests[0]);

  h.service.reconfigure(compile(`${localEgress}/hooks {\n  deliver "${newRx.url}" {\n    header "X-Generation" "2"\n  }\n}\n`));
  await h.enqueue("evt_after", newRx.url, "after");
  await h.enqueue("evt_old_target", oldRx.url, "stranded");
  await waitFor("new target delivery", () => newRx.requests[0]);

  assert.equal(newRx.requests.map((r) => [r.headers["x-spool-message-id"], r.headers["x-generation"], r.body.toString()]), [["evt_after", "2", "after"]]);
  assert.equal(oldRx.requests.map((r) => r.headers["x-spool-message-id"]), ["evt_before"]);
  // A removed target's messages stay queued for an operator (or a later reload), not dropped.
  const queued = await h.store.listMessages({ route: "/hooks", state: "queued", limit: 10 });
  assert.equal(queued.map((m) => m.id), ["evt_old_target"]);
});

test("stop lets a running delivery finish within the drain budget and settles it", async () => {
  let release: (() => void) | undefined;
  const held: ServerResponse[] = [];
  const rx = await receiver((_req, res) => {
    held.push(res);
    release?.();
  });
  const h = await open();
  h.service.start(compile(`${localEgress}/hooks {\n  deliver "${rx.url}"\n}\n`));
  const arrived = new Promise<void>((resolve) => (release = resolve));
  await h.enqueue("evt_drain", rx.url, "{}");
  await arrived;

  assert.equal(h.service.inFlight().total, 1);
  const stopped = h.service.stop({ drainMs: 10_000 });
  held[0].end("ok");
  const report = await stopped;

  assert.equal(report.abandoned, 0);
  const attempts = await attemptsOf(h.store, "evt_drain");
  assert.equal(attempts.map((a) => a.outcome), ["acked"]);
  assert.equal(await h.store.listMessages({ route: "/hooks", state: "leased", limit: 10 }), []);
  // After stop nothing is leased any more: a new message stays queued.
  await h.enqueue("evt_after_stop", rx.url, "{}");
  assert.equal((await h.store.listMessages({ route: "/hooks", state: "queued", limit: 10 })).map((m) => m.id), ["evt_after_stop"]);
});

test("a delivery whose message was canceled meanwhile settles into a lease conflict, logged as lease_not_found, and stays canceled", async () => {
  let arrivedResolve: (() => void) | undefined;
  const arrived = new Promise<void>((resolve) => (arrivedResolve = resolve));
  const held: ServerResponse[] = [];
  const rx = await receiver((_req, res) => {
    held.push(res);
    arrivedResolve?.();
  });
  const h = await open();
  h.service.start(compile(`${localEgress}/hooks {\n  deliver "${rx.url}"\n}\n`));
  await h.enqueue("evt_canceled", rx.url, "{}");
  await arrived;
  assert.is(await h.store.changeByIds("cancel", ["evt_canceled"]), 1);
  held[0].end("ok");

  const conflict = await waitFor("the lease conflict log line", () => h.logLines.find((line) => line.msg === "delivery settled after its lease was gone"));
  assert.equal([conflict.operation, conflict.lease_not_found, conflict.lease_expired], ["ack", 1, 0]);
  assert.equal((await h.store.getMessages(["evt_canceled"])).map((m) => m.state), ["canceled"]);
});

test("stop past the drain budget abandons a hanging delivery and leaves its message leased", async () => {
  let arrivedResolve: (() => void) | undefined;
  const arrived = new Promise<void>((resolve) => (arrivedResolve = resolve));
  const rx = await receiver(() => arrivedResolve?.());
  const h = await open();
  h.service.start(compile(`${localEgress}/hooks {\n  deliver "${rx.url}" {\n    timeout 30s\n  }\n}\n`));
  await h.enqueue("evt_hang", rx.url, "{}");
  await arrived;

  const report = await h.service.stop({ drainMs: 100 });
  assert.equal(report.abandoned, 1);
  // Nothing recorded, nothing settled: the lease runs out and the message comes back (at-least-once).
  assert.equal(await attemptsOf(h.store, "evt_hang"), []);
  assert.equal((await h.store.listMessages({ route: "/hooks", state: "leased", limit: 10 })).map((m) => m.id), ["evt_hang"]);
});

test.run();

const mapping = suite("dispatcherConfigFromIr");

mapping("only deliver routes are mapped, with concurrency, targets, retry, headers and egress", () => {
  const config = compile(`pull_api { auth token raw:t }
defaults {
  deliver { concurrency 7 }
  egress {
    allow "*.example.com"
    deny 10.0.0.0/8
    redirects on
  }
}
/pulled { pull { path /pulled } }
/pushed {
  deliver_concurrency 3
  deliver "https://a.example.com/in" {
    timeout 4s
    ${fastRetry}
    header "X-A" "1"
  }
  deliver exec "/usr/bin/env" "tool" {
    env K V
  }
}
/defaulted { deliver "https://b.example.com/in" }
`);
  const mapped = dispatcherConfigFromIr(config);
  assert.equal(mapped.egress, { allow: ["*.example.com"], deny: ["10.0.0.0/8"], httpsOnly: true, redirects: true, dnsRebindProtection: true });
  assert.equal(mapped.routes.map((r) => [r.route, r.concurrency, r.targets.map((t) => t.target)]), [
    ["/pushed", 3, ["https://a.example.com/in", "exec:/usr/bin/env"]],
    ["/defaulted", 7, ["https://b.example.com/in"]],
  ]);
  const [http, exec] = mapped.routes[0].targets;
  assert.equal(http, { kind: "http", target: "https://a.example.com/in", url: "https://a.example.com/in", timeoutMs: 4000, retry: { maxRetries: 3, baseMs: 50, capMs: 100, jitter: 0 }, headers: { "X-A": "1" } });
  assert.equal(exec.kind === "exec" ? [exec.program, exec.args, exec.env] : null, ["/usr/bin/env", ["tool"], { K: "V" }]);
});

mapping("unreadable secrets are skipped; with none readable the target gets a never-valid secret", () => {
  const config = compile(`/hooks {
  deliver "https://a.example.com/in" { sign hmac env:GONE }
  deliver "https://b.example.com/in" { sign standard_webhooks env:GONE }
}
`);
  for (const target of dispatcherConfigFromIr(config).routes[0].targets) {
    assert.ok(target.kind === "http" && target.signing);
    assert.equal(target.signing.secrets, [{ value: "AA==", validFromMs: 0, validUntilMs: 0 }]);
  }
});

mapping.run();
