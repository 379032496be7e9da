// keep serve: the HTTP API over real HTTPS against the built CLI: status order, list filtering,
// byte-exact values, the audit lines each request writes, and admin changes seen without restart.
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { call, issue, keep, makeFixture, put, serve, type Fixture, type Served } from "./keep-helpers.js";

const test = suite("keep serve: HTTP API");
let fx: Fixture;
let srv: Served;
let ci: string;
let reader: string;
let nobody: string;
const tricky = "line1\nline2\r\n  spaced  \r\ttab ünïcode ✓\n";

const audit = (): Record<string, string>[] =>
  readFileSync(join(fx.data, "audit.log"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));

test.before(async () => {
  fx = await makeFixture("api");
  put(fx, "app/prod/DB_PASSWORD", tricky);
  put(fx, "app/prod/API_KEY", "k-123");
  put(fx, "app/pub/NAME", "public-ish");
  put(fx, "app/pub/deep/X", "deeper");
  put(fx, "apps/OTHER", "not-under-app");
  put(fx, "svc/a/KEY", "svc-a");
  put(fx, "svc/a/b/KEY", "svc-deep");
  ci = issue(fx, "ci-app");
  reader = issue(fx, "reader");
  nobody = issue(fx, "nobody");
  srv = await serve(fx);
});
test.after(async () => {
  await srv.stop();
  fx.cleanup();
});

const get = (path: string, token?: string) => call(srv, fx.certs.caPem, "GET", path, { token });

test("/healthz answers 200 {status: ok} without a token", async () => {
  const r = await get("/healthz");
  assert.is(r.status, 200);
  assert.is(r.text, '{"status":"ok"}');
  assert.is(r.headers["content-type"], "application/json");
});

test("a missing, malformed or unknown token is 401 unauthorized, before any route check", async () => {
  for (const [path, token] of [
    ["/v1/secrets/app/prod/API_KEY", undefined],
    ["/v1/secrets/app/prod/API_KEY", "not a token"],
    ["/v1/secrets/app/prod/API_KEY", "A".repeat(43)],
    ["/v1/no-such-route", undefined],
    ["/v1/list/app", `${ci}x`],
  ] as const) {
    const r = await get(path, token);
    assert.is(r.status, 401, `${path}`);
    assert.equal(r.json(), { error: { code: "unauthorized", message: r.json().error.message } });
    assert.not.ok(r.text.includes(ci));
  }
  const raw = await call(srv, fx.certs.caPem, "GET", "/v1/secrets/app/prod/API_KEY", { headers: { Authorization: `Basic ${ci}` } });
  assert.is(raw.status, 401);
});

test("a client that never finishes its body gets its 401 without waiting for it, and the connection closes", async () => {
  // Content-Length promises 1,000 bytes; 10 are sent and the rest never come. The server answers once
  // its short wait for the unused body is over (keep/server/respond.ts), not at its request timeout.
  const answer = await new Promise<{ status: number; connection: string | undefined; closed: Promise<void> }>((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", servername: "localhost", port: srv.port, method: "GET", path: "/v1/secrets/app/prod/API_KEY", ca: fx.certs.caPem, agent: false, headers: { "content-length": "1000" } },
      (res) => {
        res.resume();
        const closed = new Promise<void>((done) => req.socket!.once("close", () => done()));
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, closed });
      },
    );
    req.on("error", reject);
    req.write("x".repeat(10));
    // A liveness bound far below Node's 300 s request timeout, not a speed assertion.
    setTimeout(() => reject(new Error("no answer within 20 s")), 20_000).unref();
  });
  assert.is(answer.status, 401);
  assert.is(answer.connection, "close");
  await answer.closed;
});

test("GET /v1/secrets/{path} returns the value byte-exact (newlines, CR, spaces, UTF-8)", async () => {
  const r = await get("/v1/secrets/app/prod/DB_PASSWORD", ci);
  assert.is(r.status, 200);
  assert.is(r.headers["content-type"], "application/json");
  assert.equal(r.json(), { value: tricky });
});

test("a 1 MiB value is stored and delivered byte-exact", async () => {
  const big = "x\n".repeat(512 * 1024);
  put(fx, "app/big/BLOB", big);
  assert.is((await get("/v1/secrets/app/big/BLOB", ci)).json().value, big);
  assert.is(keep(["rm", "app/big/BLOB", "--data", fx.data]).status, 0);
});

test("403 forbidden whether or not the path exists; 404 only when allowed and missing", async () => {
  const denied = await get("/v1/secrets/apps/OTHER", ci);
  const deniedMissing = await get("/v1/secrets/apps/NOPE", ci);
  assert.is(denied.status, 403);
  assert.is(denied.text, deniedMissing.text);
  assert.is(denied.json().error.code, "forbidden");
  const missing = await get("/v1/secrets/app/prod/NOPE", ci);
  assert.is(missing.status, 404);
  assert.is(missing.json().error.code, "not_found");
  assert.is((await get("/v1/secrets/app/prod/API_KEY", nobody)).status, 403);
});

test("globs per segment: svc/*/KEY reads svc/a/KEY, not svc/a/b/KEY", async () => {
  assert.is((await get("/v1/secrets/svc/a/KEY", ci)).json().value, "svc-a");
  assert.is((await get("/v1/secrets/svc/a/b/KEY", ci)).status, 403);
});

test("unknown routes and methods are 404 not_found; export is 404 without --enable-export", async () => {
  assert.is((await get("/v1/nothing", ci)).status, 404);
  assert.is((await get("/", ci)).status, 404);
  assert.is((await call(srv, fx.certs.caPem, "DELETE", "/v1/secrets/app/prod/API_KEY", { token: ci })).status, 404);
  const exp = await call(srv, fx.certs.caPem, "POST", "/v1/export", { token: ci, body: '{"paths":["app/prod/API_KEY"]}' });
  assert.is(exp.status, 404);
  assert.is(exp.json().error.code, "not_found");
  assert.is((await call(srv, fx.certs.caPem, "POST", "/v1/export", { body: "{}" })).status, 401);
});

test("list returns the full paths under the prefix in byte order, never the prefix itself or apps/", async () => {
  const r = await get("/v1/list/app", ci);
  assert.is(r.status, 200);
  assert.equal(r.json(), { paths: ["app/prod/API_KEY", "app/prod/DB_PASSWORD", "app/pub/NAME", "app/pub/deep/X"] });
  assert.is((await get("/v1/list/app/", ci)).text, r.text);
  assert.equal((await get("/v1/list/svc", ci)).json(), { paths: ["svc/a/KEY"] });
});

test("list authorizes each path: without list a path is absent, yet readable by explicit path", async () => {
  assert.equal((await get("/v1/list/app", reader)).json(), { paths: ["app/pub/NAME"] });
  assert.is((await get("/v1/secrets/app/prod/API_KEY", reader)).json().value, "k-123");
});

test("no list grant gives 200 {paths: []}, byte-identical to an empty prefix", async () => {
  const none = await get("/v1/list/app", nobody);
  const empty = await get("/v1/list/nothing/here", ci);
  assert.is(none.status, 200);
  assert.is(none.text, '{"paths":[]}');
  assert.is(none.text, empty.text);
  assert.equal(none.headers["content-type"], empty.headers["content-type"]);
  assert.equal(none.headers["content-length"], empty.headers["content-length"]);
});

test("one audit line per secret served; lists, 401, 403 and 404 write none", async () => {
  const before = audit().length;
  await get("/v1/list/app", ci);
  await get("/v1/secrets/app/prod/API_KEY");
  await get("/v1/secrets/apps/OTHER", ci);
  await get("/v1/secrets/app/prod/NOPE", ci);
  assert.is(audit().length, before);
  await get("/v1/secrets/app/prod/API_KEY", reader);
  const lines = audit();
  assert.is(lines.length, before + 1);
  const last = lines[lines.length - 1];
  assert.is(last.identity, "reader");
  assert.is(last.op, "read");
  assert.is(last.path, "app/prod/API_KEY");
  assert.match(last.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const text = readFileSync(join(fx.data, "audit.log"), "utf8");
  assert.not.ok(text.includes("k-123"));
  assert.not.ok(text.includes(reader));
});

test("keep put and rm show at the next request", async () => {
  put(fx, "app/new/FRESH", "v1");
  assert.is((await get("/v1/secrets/app/new/FRESH", ci)).json().value, "v1");
  put(fx, "app/new/FRESH", "v2");
  assert.is((await get("/v1/secrets/app/new/FRESH", ci)).json().value, "v2");
  assert.is(keep(["rm", "app/new/FRESH", "--data", fx.data]).status, 0);
  assert.is((await get("/v1/secrets/app/new/FRESH", ci)).status, 404);
});

test("a new token works without restart and replaces the identity's previous one; revoke stops it", async () => {
  const fresh = issue(fx, "reader");
  assert.is((await get("/v1/secrets/app/prod/API_KEY", fresh)).status, 200);
  assert.is((await get("/v1/secrets/app/prod/API_KEY", reader)).status, 401);
  assert.is(keep(["token", "revoke", "reader", "--data", fx.data]).status, 0);
  assert.is((await get("/v1/secrets/app/prod/API_KEY", fresh)).status, 401);
  reader = issue(fx, "reader");
});

test("the server logs no value and no token", async () => {
  assert.not.ok(srv.stderr().includes("k-123"));
  assert.not.ok(srv.stderr().includes(ci));
});

test.run();
