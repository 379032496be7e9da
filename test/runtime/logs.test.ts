import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createAccessLogger } from "../../runtime/observability/access-log.js";
import { createRuntimeLogger } from "../../runtime/observability/log.js";
import { REDACTED, redact, redactProse, redactText } from "../../runtime/observability/redact.js";
import type { LogSink } from "../../runtime/observability/sink.js";

const clock = { now: () => Date.UTC(2026, 0, 15, 12, 0, 0) };

function memorySink(): LogSink & { lines: () => Record<string, unknown>[]; text: () => string } {
  let text = "";
  return {
    write: (line) => void (text += line),
    close: async () => undefined,
    text: () => text,
    lines: () => text.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line)),
  };
}

const redaction = suite("redaction");

redaction("credential headers are masked whatever their case, other headers kept", () => {
  const headers = { Authorization: "Bearer abc123", "proxy-authorization": "Basic Zm9v", COOKIE: "session=s1", "Set-Cookie": "a=b", "content-type": "application/json" };
  assert.equal(redact({ headers }), {
    headers: { Authorization: REDACTED, "proxy-authorization": REDACTED, COOKIE: REDACTED, "Set-Cookie": REDACTED, "content-type": "application/json" },
  });
});

redaction("secret-named fields are masked at any depth, including signatures and DSNs", () => {
  const value = redact({
    route: "/github",
    auth: { secret: "s3cret", tokens: ["t1", "t2"], nested: [{ api_key: "k" }] },
    "X-Hub-Signature-256": "sha256=ff",
    postgres_dsn: "postgres://u:pw@db/spool",
  }) as Record<string, any>;
  assert.is(value.route, "/github");
  assert.is(value.auth.secret, REDACTED);
  assert.is(value.auth.tokens, REDACTED);
  assert.is(value.auth.nested[0].api_key, REDACTED);
  assert.is(value["X-Hub-Signature-256"], REDACTED);
  assert.is(value.postgres_dsn, REDACTED);
  assert.not.match(JSON.stringify(value), /s3cret|t1|pw@/);
});

redaction("credentials inside free text and error messages are masked", () => {
  assert.is(redactText("retrying with Bearer abc.def-123 now"), `retrying with Bearer ${REDACTED} now`);
  assert.is(redactText("connect postgres://spool:hunter2@db:5432/x failed"), `connect postgres://spool:${REDACTED}@db:5432/x failed`);
  const error = redact({ error: new Error("auth failed for basic Zm9vOmJhcg==") }) as Record<string, any>;
  assert.equal(error.error, { name: "Error", message: `auth failed for basic ${REDACTED}` });
});

redaction("prose keeps ordinary words after basic or bearer and masks token-shaped ones", () => {
  for (const kept of ["basic cleanup of stale dlq items", "ops bearer duty", "Basic Authentication was misconfigured"]) assert.is(redactProse(kept), kept);
  assert.is(redactProse("rotate Bearer abc.def-123 now"), `rotate Bearer ${REDACTED} now`);
  assert.is(redactProse("old header Basic dXNlcjpwYXNz"), `old header Basic ${REDACTED}`);
  assert.is(redactProse("Bearer abcdefghijklmnopqrstuvwxyz"), `Bearer ${REDACTED}`);
  assert.is(redactProse("see postgres://u:pw@db/x"), `see postgres://u:${REDACTED}@db/x`);
});

redaction("cycles, buffers and deep nesting do not break a log line", () => {
  const cyclic: Record<string, unknown> = { name: "a" };
  cyclic.self = cyclic;
  const out = redact({ cyclic, body: Buffer.alloc(10) }) as Record<string, any>;
  assert.is(out.cyclic.self, "[circular]");
  assert.is(out.body, "[10 bytes]");
  let deep: Record<string, unknown> = {};
  const root = deep;
  for (let i = 0; i < 20; i++) deep = deep.next = {} as Record<string, unknown>;
  assert.match(JSON.stringify(redact(root)), /\[truncated\]/);
});

const runtime = suite("runtime log");

runtime("writes JSON lines at or above the level with time, level, msg and fields", () => {
  const sink = memorySink();
  const log = createRuntimeLogger({ level: "info", output: { kind: "stderr" }, clock, sink });
  log.debug("hidden");
  log.info("config loaded", { routes: 3 });
  log.error("store failed", { component: "store" });
  assert.equal(sink.lines(), [
    { time: "2026-01-15T12:00:00.000Z", level: "info", msg: "config loaded", routes: 3 },
    { time: "2026-01-15T12:00:00.000Z", level: "error", msg: "store failed", component: "store" },
  ]);
});

runtime("off writes nothing; setLevel changes the threshold; child adds fields", () => {
  const sink = memorySink();
  const log = createRuntimeLogger({ level: "off", output: { kind: "stderr" }, clock, sink });
  log.error("nothing");
  assert.is(sink.text(), "");
  log.setLevel("debug");
  assert.ok(log.enabled("debug"));
  log.child({ component: "reload" }).debug("watching", { level: "sneaky", msg: "sneaky" });
  assert.equal(sink.lines(), [{ time: "2026-01-15T12:00:00.000Z", level: "debug", msg: "watching", component: "reload" }]);
});

runtime("secrets passed to the logger never reach the output", () => {
  const sink = memorySink();
  const log = createRuntimeLogger({ level: "debug", output: { kind: "stderr" }, clock, sink });
  log.warn("forward auth denied Bearer tok-123", { headers: { authorization: "Bearer tok-123", cookie: "sid=9" }, secret: "s3cret" });
  assert.not.match(sink.text(), /tok-123|sid=9|s3cret/);
  assert.match(sink.text(), /\[redacted\]/);
});

runtime("the file output appends lines and creates the directory", async () => {
  const dir = mkdtempSync(join(tmpdir(), "spool-log-"));
  try {
    const path = join(dir, "logs", "spool.log");
    const first = createRuntimeLogger({ level: "info", output: { kind: "file", path }, clock });
    first.info("one");
    await first.close();
    const second = createRuntimeLogger({ level: "info", output: { kind: "file", path }, clock });
    second.info("two");
    await second.close();
    const lines = readFileSync(path, "utf8").trim().split("\n").map((line) => JSON.parse(line).msg);
    assert.equal(lines, ["one", "two"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const access = suite("access log");

access("one line per request with listener, method, path, status, duration and byte counts; no query, no credentials", async () => {
  const sink = memorySink();
  let tick = 0;
  const accessLog = createAccessLogger({ output: { kind: "stderr" }, clock, sink, elapsedMs: () => (tick += 5) });
  const server = createServer((req, res) => {
    accessLog.track(req, res, "ingress");
    req.resume();
    req.on("end", () => {
      res.statusCode = 202;
      res.end('{"status":"queued"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const port = (server.address() as AddressInfo).port;
    const response = await fetch(`http://127.0.0.1:${port}/hooks/github?token=qs-secret`, {
      method: "POST",
      headers: { authorization: "Bearer header-secret", cookie: "sid=cookie-secret" },
      body: "x".repeat(100),
    });
    await response.text();
    await new Promise((resolve) => setImmediate(resolve));
    const [line, ...rest] = sink.lines();
    assert.is(rest.length, 0);
    assert.equal(Object.keys(line).sort(), ["bytes_in", "bytes_out", "duration_ms", "listener", "method", "path", "remote", "status", "time"]);
    assert.is(line.listener, "ingress");
    assert.is(line.method, "POST");
    assert.is(line.path, "/hooks/github");
    assert.is(line.status, 202);
    assert.is(line.duration_ms, 5);
    assert.ok((line.bytes_in as number) >= 100, `bytes_in ${line.bytes_in}`);
    assert.ok((line.bytes_out as number) >= 19, `bytes_out ${line.bytes_out}`);
    assert.is(line.remote, "127.0.0.1");
    assert.is(line.time, "2026-01-15T12:00:00.000Z");
    assert.not.match(sink.text(), /secret/);
  } finally {
    server.close();
  }
});

access("a request its client abandons is logged with status 0 and the client's address, read before the socket closed", async () => {
  const sink = memorySink();
  const accessLog = createAccessLogger({ output: { kind: "stderr" }, clock, sink });
  // The handler never answers: the client gives up, as a long poll's client does.
  const server = createServer((req, res) => accessLog.track(req, res, "pull"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const port = (server.address() as AddressInfo).port;
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write("POST /jobs/dequeue HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const [line] = sink.lines();
    assert.equal([line.path, line.status, line.remote], ["/jobs/dequeue", 0, "127.0.0.1"]);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

access("a log file that cannot be opened stops the start with its path and reason", () => {
  const dir = mkdtempSync(join(tmpdir(), "spool-log-"));
  try {
    assert.throws(() => createAccessLogger({ output: { kind: "file", path: dir }, clock }), (error: Error) => error.message.startsWith(`cannot open log file ${dir}: EISDIR`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

redaction.run();
runtime.run();
access.run();
