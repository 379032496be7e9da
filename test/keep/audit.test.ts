// The audit trail: fail closed (503 audit_unavailable, nothing served), group commit (concurrent
// reads share an fsync), and the hash chain that `keep audit verify` checks line by line.
import { appendFileSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { AuditLog, lineHash } from "../../keep/server/audit.js";
import { call, issue, keep, makeFixture, put, serve, type Fixture } from "./keep-helpers.js";

const test = suite("keep: audit trail");
let fx: Fixture;
let token: string;
const VALUE = "audited-value-7f3a9c";

test.before(async () => {
  fx = await makeFixture("audit");
  put(fx, "app/prod/A", VALUE);
  put(fx, "app/prod/B", `${VALUE}-b`);
  token = issue(fx, "ci-app");
});
test.after(() => fx.cleanup());

test("an audit log that cannot be written (/dev/full) answers 503 audit_unavailable with no value, for reads and exports", async () => {
  const srv = await serve(fx, ["--audit-log", "/dev/full", "--enable-export"]);
  try {
    const r = await call(srv, fx.certs.caPem, "GET", "/v1/secrets/app/prod/A", { token });
    assert.is(r.status, 503);
    assert.equal(r.json().error.code, "audit_unavailable");
    assert.not.ok(r.text.includes(VALUE));
    const e = await call(srv, fx.certs.caPem, "POST", "/v1/export", { token, body: '{"paths":["app/prod/A","app/prod/B"]}' });
    assert.is(e.status, 503);
    assert.not.ok(e.text.includes(VALUE));
    assert.is((await call(srv, fx.certs.caPem, "GET", "/v1/list/app", { token })).status, 200, "lists are not audited");
    assert.not.ok(srv.stderr().includes(VALUE));
  } finally {
    await srv.stop();
  }
});

test("concurrent appends share fsyncs (group commit) and every line lands, chained", async () => {
  const file = join(fx.dir, "group.log");
  const log = new AuditLog(file);
  await Promise.all(Array.from({ length: 200 }, (_, i) => log.append([{ identity: "ci-app", op: "read", path: `app/p/${i}` }])));
  log.close();
  assert.ok(log.fsyncs < 200, `${log.fsyncs} fsyncs for 200 lines`);
  const lines = readFileSync(file, "utf8").trim().split("\n");
  assert.is(lines.length, 200);
  assert.is(keep(["audit", "verify", file]).status, 0);
});

test("a log moved or deleted while serving is opened again at its path, so no line goes out of sight", async () => {
  const file = join(fx.dir, "rotated.log");
  const log = new AuditLog(file);
  await log.append([{ identity: "ci-app", op: "read", path: "app/p/1" }]);
  renameSync(file, `${file}.1`);
  await log.append([{ identity: "ci-app", op: "read", path: "app/p/2" }]);
  rmSync(file);
  await log.append([{ identity: "ci-app", op: "read", path: "app/p/3" }]);
  log.close();
  assert.match(readFileSync(`${file}.1`, "utf8"), /app\/p\/1/);
  const current = readFileSync(file, "utf8").trim().split("\n");
  assert.equal(current.map((l) => JSON.parse(l).path), ["app/p/3"], "the deleted file's successor holds the line written after the rm");
  assert.is(JSON.parse(current[0]).prev, "0".repeat(64), "a new file starts a chain of its own");
  assert.is(keep(["audit", "verify", `${file}.1`]).status, 0);
  assert.is(keep(["audit", "verify", file]).status, 0);
});

test("a last line a crash cut short is ended before the next record, which stays whole", async () => {
  const file = join(fx.dir, "torn.log");
  const first = new AuditLog(file);
  await first.append([{ identity: "ci-app", op: "read", path: "app/p/1" }]);
  first.close();
  appendFileSync(file, '{"ts":"2026-11-27T11:5');
  const second = new AuditLog(file);
  await second.append([{ identity: "ci-app", op: "read", path: "app/p/2" }]);
  second.close();
  const lines = readFileSync(file, "utf8").trim().split("\n");
  assert.is(lines.length, 3);
  assert.is(JSON.parse(lines[2]).path, "app/p/2");
  assert.is(JSON.parse(lines[2]).prev, lineHash(lines[1]), "the chain goes through the torn line");
  const v = keep(["audit", "verify", file]);
  assert.is(v.status, 1);
  assert.match(v.stderr + v.stdout, /line 2/);
});

test("the chain continues across restarts and verify accepts it", async () => {
  for (let round = 0; round < 2; round++) {
    const srv = await serve(fx);
    await Promise.all([0, 1, 2].map(() => call(srv, fx.certs.caPem, "GET", "/v1/secrets/app/prod/A", { token })));
    await srv.stop();
  }
  const file = join(fx.data, "audit.log");
  const lines = readFileSync(file, "utf8").trim().split("\n");
  assert.is(lines.length, 6);
  const v = keep(["audit", "verify", file]);
  assert.is(v.status, 0, v.stderr);
  assert.match(v.stdout, /6 lines/);
  assert.is(JSON.parse(lines[0]).prev, "0".repeat(64));
});

function verifyVariant(name: string, edit: (lines: string[]) => string[]): { status: number | null; stderr: string } {
  const lines = readFileSync(join(fx.data, "audit.log"), "utf8").trim().split("\n");
  const file = join(fx.dir, `${name}.log`);
  writeFileSync(file, `${edit(lines).join("\n")}\n`);
  return keep(["audit", "verify", file]);
}

test("verify names the first broken line for an edited, deleted or inserted line", () => {
  const edited = verifyVariant("edited", (l) => l.map((x, i) => (i === 2 ? x.replace("app/prod/A", "app/prod/B") : x)));
  assert.is(edited.status, 1);
  assert.match(edited.stderr, /line 4/);
  const deleted = verifyVariant("deleted", (l) => l.filter((_, i) => i !== 1));
  assert.is(deleted.status, 1);
  assert.match(deleted.stderr, /line 2/);
  const inserted = verifyVariant("inserted", (l) => [...l.slice(0, 3), l[3].replace(/"path":"[^"]+"/, '"path":"app/x"'), ...l.slice(3)]);
  assert.is(inserted.status, 1);
  assert.match(inserted.stderr, /line 5/);
  const garbage = verifyVariant("garbage", (l) => [l[0], "not json", ...l.slice(1)]);
  assert.is(garbage.status, 1);
  assert.match(garbage.stderr, /line 2/);
});

test.run();
