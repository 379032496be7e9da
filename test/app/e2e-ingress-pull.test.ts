// End to end against the built `spool run` on SQLite: ingress → Pull API, every ingress and Pull
// status code, authentication outcomes over HTTP, limits, metrics, access log and hostile input.
import { createHash, createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makeTempDir } from "../helpers/temp-dir.js";
import { call, pullCall } from "./helpers/http.js";
import { spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "./helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "./helpers/spoolfile.js";

const ROUTES = `
/hooks/a { pull { path /a } }
/hooks/hmac { auth hmac raw:hmacsecret; pull { path /hmac } }
/hooks/gh { auth hmac { provider github; secret raw:ghsecret }; pull { path /gh } }
/hooks/stripe { auth hmac { provider stripe; secret raw:stripesecret }; pull { path /stripe } }
/hooks/tok { auth token raw:tok1; pull { path /tok } }
/hooks/basic { auth basic "user" "pass"; pull { path /basic } }
/hooks/small { max_body 1kb; max_headers 1kb; pull { path /small } }
/hooks/limited { rate_limit { rps 0.01; burst 2 }; pull { path /limited } }
/hooks/fan {
  deliver "https://one.example/in" { timeout 5s }
  deliver "https://two.example/in" { timeout 5s }
}
/hooks/scoped { pull { path /scoped; auth token raw:scoped-token } }
/hooks/lease { pull { path /lease } }
`;

const temp = makeTempDir("e2e-ingress");
let proc: SpoolProcess;
let u: ReturnType<typeof urls>;
let slowloris: Promise<{ closedAfterMs: number; reply: string }>;

const test = suite("spool run: ingress and Pull API end to end");

test.before(async () => {
  const ports = await freePorts();
  u = urls(ports);
  const config = writeSpoolfile(temp.path, spoolfileText(ports, ROUTES));
  proc = spawnSpool(["run", "--config", config, "--db", join(temp.path, "data", "spool.db")]);
  await waitHealthy(proc, u.admin);
  // Started first, checked last: a client that never finishes its headers is cut off.
  slowloris = dripHeaders(ports.ingress);
});

test.after(async () => {
  const result = await stopSpool(proc);
  temp.cleanup();
  assert.is(result.code, 0, `spool exited cleanly after SIGTERM\n${proc.output().slice(-2000)}`);
});

test("ingress → dequeue → ack, and the acked message is gone", async () => {
  const posted = await call(`${u.ingress}/hooks/a`, { headers: { "content-type": "application/json", authorization: "Bearer x", cookie: "k=v", "proxy-authorization": "p" }, body: '{"n":1}' });
  assert.is(posted.status, 202);
  assert.is(posted.json.status, "queued");
  const { items } = (await pullCall(`${u.pull}/a`, "dequeue", "pull-token", { batch: 10 })).json;
  assert.is(items.length, 1);
  assert.is(items[0].id, posted.json.ids[0]);
  assert.is(Buffer.from(items[0].payload_b64, "base64").toString(), '{"n":1}');
  for (const name of ["Authorization", "Cookie", "Proxy-Authorization"]) assert.not.ok(name in items[0].headers, `${name} is not stored`);
  assert.is((await pullCall(`${u.pull}/a`, "ack", "pull-token", { lease_id: items[0].lease_id })).status, 204);
  assert.equal((await pullCall(`${u.pull}/a`, "dequeue", "pull-token", {})).json.items, []);
});

test("fan-out answers one id per deliver target", async () => {
  const posted = await call(`${u.ingress}/hooks/fan`, { body: "x" });
  assert.is(posted.status, 202);
  assert.is(posted.json.ids.length, 2);
  assert.is.not(posted.json.ids[0], posted.json.ids[1]);
  // The 202 body is written out by hand (runtime/ingress/handler.ts queuedReply): pin its exact
  // text, for several ids here and for one id below, so it cannot drift from JSON.stringify's.
  assert.is(posted.text, JSON.stringify({ status: "queued", ids: posted.json.ids }));
  assert.is(posted.headers.get("content-type"), "application/json");
  const single = await call(`${u.ingress}/hooks/a`, { body: "x" });
  assert.is(single.status, 202);
  assert.is(single.json.ids.length, 1);
  assert.is(single.text, `{"status":"queued","ids":["${single.json.ids[0]}"]}`);
});

test("ingress refusals: 404, 405 with Allow, each a JSON {code, detail}", async () => {
  const missing = await call(`${u.ingress}/nope`, { body: "x" });
  assert.equal([missing.status, missing.json.code], [404, "not_found"]);
  assert.type(missing.json.detail, "string");
  const wrong = await call(`${u.ingress}/hooks/a`, { method: "PUT", body: "x" });
  assert.equal([wrong.status, wrong.json.code, wrong.headers.get("allow")], [405, "method_not_allowed", "POST"]);
  assert.is((await call(`${u.ingress}/hooks/a-suffix`, { body: "x" })).status, 404);
});

test("generic HMAC: valid signature 202, replayed nonce 401, bad or stale signature 401", async () => {
  const body = '{"event":"x"}';
  const sign = (ts: number, nonce: string, payload = body) => ({
    "x-signature": createHmac("sha256", "hmacsecret").update(`POST\n/hooks/hmac\n${ts}\n${createHash("sha256").update(payload).digest("hex")}`).digest("hex"),
    "x-timestamp": String(ts),
    "x-nonce": nonce,
  });
  const now = Math.floor(Date.now() / 1000);
  assert.is((await call(`${u.ingress}/hooks/hmac`, { headers: sign(now, "n-1"), body })).status, 202);
  const replay = await call(`${u.ingress}/hooks/hmac`, { headers: sign(now, "n-1"), body });
  assert.equal([replay.status, replay.json.code], [401, "unauthorized"]);
  assert.is((await call(`${u.ingress}/hooks/hmac`, { headers: sign(now, "n-2"), body: body + " " })).status, 401, "body changed");
  assert.is((await call(`${u.ingress}/hooks/hmac`, { headers: sign(now - 3600, "n-3"), body })).status, 401, "stale timestamp");
  assert.is((await call(`${u.ingress}/hooks/hmac`, { headers: { "x-signature": "zz", "x-timestamp": "abc", "x-nonce": "n" }, body })).status, 401, "malformed");
  assert.is((await call(`${u.ingress}/hooks/hmac`, { body })).status, 401, "missing");
});

test("route rate limit: 429 rate_limited with Retry-After past the burst; refused requests are not stored", async () => {
  // Nonce release after a refusal is tested over HTTP in test/app/ingress-replay.test.ts.
  const statuses: number[] = [];
  let retryAfter: string | null = null;
  for (let i = 0; i < 4; i++) {
    const reply = await call(`${u.ingress}/hooks/limited`, { body: `r${i}` });
    statuses.push(reply.status);
    if (reply.status === 429) {
      retryAfter = reply.headers.get("retry-after");
      assert.is(reply.json.code, "rate_limited");
    }
  }
  assert.equal(statuses, [202, 202, 429, 429]);
  assert.ok(Number(retryAfter) >= 1);
  const { items } = (await pullCall(`${u.pull}/limited`, "dequeue", "pull-token", { batch: 10 })).json;
  assert.is(items.length, 2, "refused requests are never stored");
});

test("github and stripe presets: valid 202, wrong or malformed signature 401", async () => {
  const body = '{"zen":"ok"}';
  const gh = "sha256=" + createHmac("sha256", "ghsecret").update(body).digest("hex");
  assert.is((await call(`${u.ingress}/hooks/gh`, { headers: { "x-hub-signature-256": gh }, body })).status, 202);
  assert.is((await call(`${u.ingress}/hooks/gh`, { headers: { "x-hub-signature-256": gh.replace(/.$/, "0") }, body })).status, 401);
  assert.is((await call(`${u.ingress}/hooks/gh`, { headers: { "x-hub-signature-256": "sha1=garbage" }, body })).status, 401);
  const t = Math.floor(Date.now() / 1000);
  const v1 = createHmac("sha256", "stripesecret").update(`${t}.${body}`).digest("hex");
  assert.is((await call(`${u.ingress}/hooks/stripe`, { headers: { "stripe-signature": `t=${t},v1=${v1}` }, body })).status, 202);
  assert.is((await call(`${u.ingress}/hooks/stripe`, { headers: { "stripe-signature": `t=${t - 3600},v1=${v1}` }, body })).status, 401);
  assert.is((await call(`${u.ingress}/hooks/stripe`, { headers: { "stripe-signature": "t=,v1=,,,==" }, body })).status, 401);
});

test("bearer token and basic auth on ingress; each 401 carries its scheme's WWW-Authenticate challenge, a signature 401 none", async () => {
  assert.is((await call(`${u.ingress}/hooks/tok`, { headers: { authorization: "Bearer tok1" }, body: "x" })).status, 202);
  const wrongToken = await call(`${u.ingress}/hooks/tok`, { headers: { authorization: "Bearer tok2" }, body: "x" });
  assert.equal([wrongToken.status, wrongToken.headers.get("www-authenticate")], [401, 'Bearer realm="spool"']);
  assert.is((await call(`${u.ingress}/hooks/tok`, { body: "x" })).status, 401);
  const basic = (user: string, pass: string) => ({ authorization: "Basic " + Buffer.from(`${user}:${pass}`).toString("base64") });
  assert.is((await call(`${u.ingress}/hooks/basic`, { headers: basic("user", "pass"), body: "x" })).status, 202);
  const wrongPass = await call(`${u.ingress}/hooks/basic`, { headers: basic("user", "nope"), body: "x" });
  assert.equal([wrongPass.status, wrongPass.headers.get("www-authenticate")], [401, 'Basic realm="spool", charset="UTF-8"']);
  const unsigned = await call(`${u.ingress}/hooks/gh`, { body: "x" });
  assert.equal([unsigned.status, unsigned.headers.get("www-authenticate")], [401, null]);
});

test("max_body: a 50 MB upload with and without Content-Length gets its 413 JSON, not a reset; max_headers 413; nothing stored", async () => {
  for (const withLength of [true, false]) {
    const refused = await upload(u.ingress, "/hooks/small", 50 * 1024 * 1024, withLength);
    assert.equal([refused.status, refused.error], [413, undefined], `Content-Length ${withLength}: ${JSON.stringify(refused)}`);
    assert.is(JSON.parse(refused.body).code, "payload_too_large");
    assert.ok(refused.sentBytes < 50 * 1024 * 1024, "the upload stopped at the reply");
  }
  const small = await upload(u.ingress, "/hooks/small", 4096, true);
  assert.equal([small.status, JSON.parse(small.body).code], [413, "payload_too_large"], "a small over-limit body always gets its 413");
  const headers = await call(`${u.ingress}/hooks/small`, { headers: { "x-big": "y".repeat(2000) }, body: "x" });
  assert.equal([headers.status, headers.json.code], [413, "headers_too_large"]);
  assert.is((await call(`${u.ingress}/hooks/small`, { body: "fits" })).status, 202);
  const { items } = (await pullCall(`${u.pull}/small`, "dequeue", "pull-token", { batch: 10 })).json;
  assert.is(items.length, 1);
});

test("Pull API auth: 401 missing/invalid (with a Bearer challenge), 403 outside the route's own list", async () => {
  const missing = await call(`${u.pull}/a/dequeue`, { body: "{}" });
  assert.equal([missing.json.code, missing.headers.get("www-authenticate")], ["unauthorized", 'Bearer realm="spool"']);
  assert.is((await pullCall(`${u.pull}/a`, "dequeue", "wrong")).status, 401);
  const forbidden = await pullCall(`${u.pull}/scoped`, "dequeue", "pull-token");
  assert.equal([forbidden.status, forbidden.json.code], [403, "forbidden"]);
  assert.is((await pullCall(`${u.pull}/scoped`, "dequeue", "scoped-token")).status, 200);
});

test("long poll wakes when a message arrives; short lease_ttl expires and redelivers with attempt 2", async () => {
  const waiting = pullCall(`${u.pull}/lease`, "dequeue", "pull-token", { max_wait: "20s", lease_ttl: "1s" });
  await new Promise((r) => setTimeout(r, 200));
  const posted = await call(`${u.ingress}/hooks/lease`, { body: "lease-me" });
  const first = (await waiting).json.items;
  assert.is(first.length, 1);
  assert.is(first[0].attempt, 1);
  const again = (await pullCall(`${u.pull}/lease`, "dequeue", "pull-token", { max_wait: "10s" })).json.items;
  assert.is(again.length, 1, "the expired lease returned the message");
  assert.is(again[0].id, posted.json.ids[0]);
  assert.is(again[0].attempt, 2);
  assert.is.not(again[0].lease_id, first[0].lease_id);
  const late = await pullCall(`${u.pull}/lease`, "ack", "pull-token", { lease_id: first[0].lease_id });
  assert.is(late.status, 409, "the expired lease is a conflict");
  assert.is((await pullCall(`${u.pull}/lease`, "ack", "pull-token", { lease_id: again[0].lease_id })).status, 204);
});

test("random JSON to the Pull API is never a 500", async () => {
  const shapes = [
    "", "{}", "[]", "null", "1", '"s"', "{", '{"batch":-5}', '{"batch":1e9}', '{"batch":1.5}', '{"lease_ttl":"-1s"}',
    '{"max_wait":"999h"}', '{"lease_id":5}', '{"lease_ids":"x"}', '{"lease_ids":[1,2]}', '{"lease_ids":[]}', '{"lease_id":""}',
    '{"dead":"yes"}', '{"delay":"1x"}', '{"__proto__":{"x":1}}', '{"constructor":1}', '{"extend_by":"1s","lease_ttl":"1s","lease_id":"x"}',
    "\u0000\u0001", '{"a":'.repeat(200), JSON.stringify({ lease_ids: Array.from({ length: 500 }, () => "l") }),
  ];
  for (let i = 0; i < 60; i++) shapes.push(JSON.stringify(randomJson(3)));
  for (const op of ["dequeue", "ack", "nack", "extend"]) {
    for (const body of shapes) {
      const reply = await pullCall(`${u.pull}/a`, op, "pull-token", body);
      assert.ok(reply.status < 500, `${op} ${body.slice(0, 60)} → ${reply.status} ${reply.text}`);
      if (reply.status >= 400) assert.type(reply.json?.code, "string");
    }
  }
});

test("metrics count refusals by reason and status; access log has one line per request", async () => {
  const text = await (await fetch(u.metrics)).text();
  assert.match(text, /spool_ingress_rejected_by_reason_total\{reason="not_found",status="404"\} [1-9]/);
  assert.match(text, /spool_ingress_rejected_by_reason_total\{reason="rate_limit",status="429"\} [1-9]/);
  assert.match(text, /spool_ingress_rejected_by_reason_total\{reason="payload_too_large",status="413"\} [1-9]/);
  assert.match(text, /spool_ingress_rejected_by_reason_total\{reason="auth",status="401"\} [1-9]/);
  assert.match(text, /spool_pull_acked_total\{route="\/hooks\/a"\} [1-9]/);
  assert.match(text, /spool_store_sqlite_tx_commit_total [1-9]/);
  assert.not.match(text, /spool_store_memory_items/);
  const lines = proc.output().split("\n").filter((l) => l.startsWith("{") && l.includes('"listener"'));
  const listeners = new Set(lines.map((l) => JSON.parse(l).listener));
  assert.ok(listeners.has("ingress") && listeners.has("pull") && listeners.has("admin"));
  assert.not.match(proc.output(), /tok1|hmacsecret|Bearer x/);
});

test("a body that can never end, on a route whose auth needs the body and on the Pull API, is answered 400 (not left hanging), counted once, and not stored", async () => {
  const reasonCount = async () => {
    const text = await (await fetch(u.metrics)).text();
    return Number(/spool_ingress_rejected_by_reason_total\{reason="bad_request",status="400"\} (\d+)/.exec(text)?.[1] ?? 0);
  };
  const stored = async () =>
    (await call(`${u.admin}/messages?route=/hooks/gh&limit=1000`, { method: "GET", headers: { authorization: "Bearer admin-token" } })).json.items.length as number;
  const before = await reasonCount();
  const storedBefore = await stored();
  const rawExchange = (port: number, raw: string, halfClose: boolean) =>
    new Promise<string>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      let reply = "";
      socket.setTimeout(8_000, () => socket.destroy());
      socket.on("data", (d) => (reply += d));
      socket.on("error", () => undefined);
      socket.on("close", () => resolve(reply));
      socket.write(raw);
      if (halfClose) socket.end();
    });
  const ingressPort = Number(new URL(u.ingress).port);
  // No credentials needed to reach the body of an HMAC route: before the fix, each held a socket forever.
  const chunked = await rawExchange(ingressPort, "POST /hooks/gh HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n", false);
  const halfClosed = await rawExchange(ingressPort, "POST /hooks/gh HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789", true);
  for (const reply of [chunked, halfClosed]) {
    assert.match(reply, /^HTTP\/1\.1 400 /, reply);
    assert.is(JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4)).code, "bad_request");
  }
  assert.is(await reasonCount(), before + 2, "each refusal counted once");
  const pullPort = Number(new URL(u.pull).port);
  const pull = await rawExchange(pullPort, `POST ${new URL(u.pull).pathname.replace(/\/$/, "")}/gh/dequeue HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer pull-token\r\nContent-Length: 50\r\n\r\n{"batch"`, true);
  assert.match(pull, /^HTTP\/1\.1 400 /, pull);
  assert.is(JSON.parse(pull.slice(pull.indexOf("\r\n\r\n") + 4)).code, "bad_request");
  assert.is(await stored(), storedBefore, "nothing stored");
});

test("slowloris headers are cut off by the headers timeout and the server keeps serving", async () => {
  const result = await slowloris;
  assert.ok(result.closedAfterMs < 20_000, `closed after ${result.closedAfterMs} ms`);
  assert.is((await call(`${u.ingress}/hooks/a`, { body: "still here" })).status, 202);
  assert.is((await call(`${u.admin}/healthz`, { method: "GET" })).status, 200);
});

test.run();

function dripHeaders(port: number): Promise<{ closedAfterMs: number; reply: string }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, "127.0.0.1");
    let reply = "";
    socket.write("POST /hooks/a HTTP/1.1\r\nHost: x\r\n");
    const timer = setInterval(() => socket.writable && socket.write("X-Slow: a\r\n"), 500);
    socket.on("data", (d) => (reply += d));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(timer);
      resolve({ closedAfterMs: Date.now() - started, reply });
    });
  });
}

/**
 * Streams `totalBytes` and stops when the server answers. A connection error before any reply is
 * reported as status 0 with the error code (EPIPE, ECONNRESET).
 */
function upload(base: string, path: string, totalBytes: number, withLength: boolean): Promise<{ status: number; body: string; sentBytes: number; error?: string }> {
  return new Promise((resolve) => {
    const url = new URL(path, base);
    const headers: Record<string, string | number> = {};
    if (withLength) headers["content-length"] = totalBytes;
    const req = httpRequest({ host: url.hostname, port: url.port, method: "POST", path, headers });
    let sentBytes = 0;
    let replied = false;
    const chunk = Buffer.alloc(Math.min(64 * 1024, totalBytes), 0x61);
    const pump = () => {
      while (!replied && sentBytes < totalBytes) {
        sentBytes += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!replied) req.end();
    };
    req.on("response", (res) => {
      replied = true;
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, sentBytes }));
    });
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (!replied) resolve({ status: 0, body: "", sentBytes, error: error.code });
    });
    pump();
  });
}

function randomJson(depth: number): unknown {
  const keys = ["batch", "lease_ttl", "max_wait", "lease_id", "lease_ids", "delay", "dead", "reason", "extend_by", "x"];
  const pick = Math.floor(Math.random() * 7);
  if (depth <= 0 || pick < 3) {
    return [Math.floor(Math.random() * 2000) - 1000, "30s", true, null, "lease_x", 0.5, ""][Math.floor(Math.random() * 7)];
  }
  if (pick < 5) return Array.from({ length: Math.floor(Math.random() * 4) }, () => randomJson(depth - 1));
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(Math.random() * 4); i > 0; i--) out[keys[Math.floor(Math.random() * keys.length)]] = randomJson(depth - 1);
  return out;
}
