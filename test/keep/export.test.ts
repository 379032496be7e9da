// POST /v1/export with --enable-export: order kept, all-or-nothing (403 before 404, nothing served
// or audited on refusal), one audit line per secret, and 400 bad_request for malformed bodies.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { call, issue, makeFixture, put, serve, type Fixture, type Served } from "./keep-helpers.js";

const test = suite("keep serve: export");
let fx: Fixture;
let srv: Served;
let ci: string;
let reader: string;

const auditLines = (): Record<string, string>[] => {
  try {
    return readFileSync(join(fx.data, "audit.log"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    return [];
  }
};
const exp = (body: string | Buffer, token = ci) => call(srv, fx.certs.caPem, "POST", "/v1/export", { token, body, headers: { "Content-Type": "application/json" } });

test.before(async () => {
  fx = await makeFixture("export");
  put(fx, "app/A", "value-A\n");
  put(fx, "app/B", "value-B");
  put(fx, "app/C", "value-C");
  put(fx, "secret/X", "value-X");
  ci = issue(fx, "ci-app");
  reader = issue(fx, "reader");
  srv = await serve(fx, ["--enable-export"]);
});
test.after(async () => {
  await srv.stop();
  fx.cleanup();
});

test("export answers every secret in the order asked, one audit line per secret with op export", async () => {
  const before = auditLines().length;
  const r = await exp('{"paths":["app/C","app/A","app/B"]}');
  assert.is(r.status, 200);
  assert.is(r.headers["content-type"], "application/json");
  assert.equal(r.json(), { secrets: [{ path: "app/C", value: "value-C" }, { path: "app/A", value: "value-A\n" }, { path: "app/B", value: "value-B" }] });
  const lines = auditLines().slice(before);
  assert.equal(lines.map((l) => [l.identity, l.op, l.path]), [["ci-app", "export", "app/C"], ["ci-app", "export", "app/A"], ["ci-app", "export", "app/B"]]);
});

test("all-or-nothing: any denied path is 403, else any missing path 404; nothing served or audited", async () => {
  const before = auditLines().length;
  const denied = await exp('{"paths":["app/A","secret/X"]}');
  assert.is(denied.status, 403);
  assert.is(denied.json().error.code, "forbidden");
  assert.not.ok(denied.text.includes("value-"));
  const deniedAndMissing = await exp('{"paths":["app/NOPE","secret/NOPE"]}');
  assert.is(deniedAndMissing.status, 403, "403 wins over 404");
  const missing = await exp('{"paths":["app/A","app/NOPE"]}');
  assert.is(missing.status, 404);
  assert.is(missing.json().error.code, "not_found");
  assert.not.ok(missing.text.includes("value-"));
  assert.is(auditLines().length, before);
});

test("export needs read on every path (list alone is not enough)", async () => {
  const r = await exp('{"paths":["app/A"]}', reader);
  assert.is(r.status, 200);
  const noToken = await call(srv, fx.certs.caPem, "POST", "/v1/export", { body: '{"paths":["app/A"]}' });
  assert.is(noToken.status, 401);
});

test("malformed bodies are 400 bad_request and never echoed", async () => {
  const bodies: (string | Buffer)[] = [
    "",
    "not json",
    "[]",
    "null",
    '{"paths":[]}',
    '{"paths":"app/A"}',
    '{"paths":["app/A","app/A"]}',
    '{"paths":["app//A"]}',
    '{"paths":["/app/A"]}',
    '{"paths":[1]}',
    '{"paths":["app/A"],"extra":true}',
    Buffer.from([0x7b, 0xff, 0x7d]),
    JSON.stringify({ paths: ["app/A"], pad: "x".repeat(1024 * 1024) }),
  ];
  for (const body of bodies) {
    const r = await exp(body);
    assert.is(r.status, 400, String(body).slice(0, 40));
    assert.is(r.json().error.code, "bad_request");
    assert.not.ok(r.text.includes("value-"));
    if (typeof body === "string" && body.length > 8) assert.not.ok(r.text.includes(body), "the body is not echoed");
  }
});

test.run();
