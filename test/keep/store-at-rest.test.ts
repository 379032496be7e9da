// The data directory: no value (nor its base64 or hex) in any file under DIR, the audit log
// included; a tampered or moved row fails to open and is never served; rotate-key re-seals every
// row; file modes; admin command contracts.
import Database from "better-sqlite3";
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { SecretStore } from "../../keep/server/store.js";
import { call, issue, keep, makeFixture, put, serve, type Fixture } from "./keep-helpers.js";

const test = suite("keep: data at rest");
let fx: Fixture;
const values: Record<string, string> = {
  "app/prod/DB_PASSWORD": "S3cr3t-database-password-0001",
  "app/prod/API_KEY": "sk_live_abcdefghijklmnopqrstuv",
  "app/prod/MULTI": "first line\nsecond line\r\nthird",
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

test.before(async () => {
  fx = await makeFixture("rest");
  for (const [p, v] of Object.entries(values)) put(fx, p, v);
});
test.after(() => fx.cleanup());

test("DIR is 0700, the key file and database 0600, and the key is 32 bytes", () => {
  assert.is(statSync(fx.data).mode & 0o777, 0o700);
  const keys = readdirSync(join(fx.data, "keys"));
  assert.equal(keys, ["k1.key"]);
  const key = join(fx.data, "keys", "k1.key");
  assert.is(statSync(key).mode & 0o777, 0o600);
  assert.is(readFileSync(key).length, 32);
  assert.is(statSync(join(fx.data, "keep.db")).mode & 0o777, 0o600);
});

test("no file under DIR holds any value, its base64 or hex, after serving them all", async () => {
  const token = issue(fx, "ci-app");
  const srv = await serve(fx);
  for (const p of Object.keys(values)) assert.is((await call(srv, fx.certs.caPem, "GET", `/v1/secrets/${p}`, { token })).json().value, values[p]);
  await srv.stop();
  const files = filesUnder(fx.data);
  assert.ok(files.some((f) => f.endsWith("audit.log")));
  for (const file of files) {
    const bytes = readFileSync(file);
    for (const v of Object.values(values)) {
      for (const needle of [Buffer.from(v), Buffer.from(Buffer.from(v).toString("base64")), Buffer.from(Buffer.from(v).toString("hex")), Buffer.from(v.slice(0, 12))]) {
        assert.is(bytes.indexOf(needle), -1, `${file} holds a value`);
      }
    }
    assert.is(bytes.indexOf(Buffer.from(token)), -1, `${file} holds the token`);
  }
});

test("keep put stores stdin byte-exact and --value-file too; invalid paths and non-UTF-8 store nothing", () => {
  const s = new SecretStore(fx.data);
  try {
    assert.is(s.get("app/prod/MULTI")!.toString("utf8"), values["app/prod/MULTI"]);
    writeFileSync(join(fx.dir, "v.txt"), "  from a file \n\n");
    assert.is(keep(["put", "app/file/V", "--data", fx.data, "--value-file", join(fx.dir, "v.txt")]).status, 0);
    assert.is(s.get("app/file/V")!.toString("utf8"), "  from a file \n\n");
    for (const bad of ["/lead", "trail/", "a//b", "a/./b", "a/../b", "sp ace", ""]) {
      assert.is(keep(["put", bad, "--data", fx.data], { input: "x" }).status, 1, bad);
    }
    const r = keep(["put", "app/bin/X", "--data", fx.data], { input: Buffer.from([0xff, 0xfe, 0x00]) });
    assert.is(r.status, 1);
    assert.not.ok(s.has("app/bin/X"));
  } finally {
    s.close();
  }
});

test("keep ls prints paths only, in byte order, under a prefix; rm of a missing path exits 1", () => {
  const all = keep(["ls", "--data", fx.data]);
  assert.is(all.status, 0);
  assert.is(all.stdout, "app/file/V\napp/prod/API_KEY\napp/prod/DB_PASSWORD\napp/prod/MULTI\n");
  assert.is(keep(["ls", "app/prod/", "--data", fx.data]).stdout, "app/prod/API_KEY\napp/prod/DB_PASSWORD\napp/prod/MULTI\n");
  for (const v of Object.values(values)) assert.not.ok(all.stdout.includes(v));
  assert.is(keep(["rm", "app/none", "--data", fx.data]).status, 1);
  assert.is(keep(["put", "x"]).status, 2, "missing --data is a usage error");
});

test("token issue: a new 0600 file, never printed; an existing file, unknown identity or bad policy exit 1", () => {
  const out = join(fx.dir, "t1");
  const r = keep(["token", "issue", "ci-app", "--policy", fx.policyFile, "--data", fx.data, "--out", out]);
  assert.is(r.status, 0);
  const token = readFileSync(out, "utf8");
  assert.match(token, /^[A-Za-z0-9_-]{22,}\n$/);
  assert.ok(Buffer.from(token.trim(), "base64url").length >= 16);
  assert.is(statSync(out).mode & 0o777, 0o600);
  assert.not.ok(r.stdout.includes(token.trim()) || r.stderr.includes(token.trim()));
  assert.is(keep(["token", "issue", "ci-app", "--policy", fx.policyFile, "--data", fx.data, "--out", out]).status, 1);
  assert.is(readFileSync(out, "utf8"), token, "an existing file is left unchanged");
  assert.is(keep(["token", "issue", "ghost", "--policy", fx.policyFile, "--data", fx.data, "--out", join(fx.dir, "t2")]).status, 1);
  assert.not.ok(existsSync(join(fx.dir, "t2")));
  writeFileSync(join(fx.dir, "bad.toml"), "[[identity]]\nname = 1\n");
  assert.is(keep(["token", "issue", "ci-app", "--policy", join(fx.dir, "bad.toml"), "--data", fx.data, "--out", join(fx.dir, "t3")]).status, 1);
  assert.not.ok(existsSync(join(fx.dir, "t3")));
});

function tamper(sql: string, ...args: unknown[]): void {
  const db = new Database(join(fx.data, "keep.db"));
  db.prepare(sql).run(...args);
  db.close();
}

test("a tampered ciphertext or a row moved to another path fails to open and is never served", async () => {
  put(fx, "app/t/A", "value-of-a-0000");
  put(fx, "app/t/B", "value-of-b-1111");
  tamper("UPDATE secrets SET ciphertext = (CAST(X'00' AS BLOB) || substr(ciphertext, 2)) WHERE path = 'app/t/A'");
  tamper("UPDATE secrets SET (key_id, nonce, ciphertext, tag) = (SELECT key_id, nonce, ciphertext, tag FROM secrets WHERE path = 'app/prod/API_KEY') WHERE path = 'app/t/B'");
  const s = new SecretStore(fx.data);
  assert.throws(() => s.get("app/t/A"), /failed authentication/);
  assert.throws(() => s.get("app/t/B"), /failed authentication/);
  s.close();
  const token = issue(fx, "ci-app");
  const srv = await serve(fx);
  const auditBefore = readFileSync(join(fx.data, "audit.log"), "utf8");
  for (const p of ["app/t/A", "app/t/B"]) {
    const r = await call(srv, fx.certs.caPem, "GET", `/v1/secrets/${p}`, { token });
    assert.is(r.status, 500);
    assert.not.ok(r.text.includes("value-of") || r.text.includes("sk_live"));
  }
  assert.is(readFileSync(join(fx.data, "audit.log"), "utf8"), auditBefore, "nothing audited");
  await srv.stop();
  assert.is(keep(["rm", "app/t/A", "--data", fx.data]).status, 0);
  assert.is(keep(["rm", "app/t/B", "--data", fx.data]).status, 0);
});

test("rotate-key re-seals every row under a new key id and removes the old key", () => {
  const r = keep(["rotate-key", "--data", fx.data]);
  assert.is(r.status, 0, r.stderr);
  assert.equal(readdirSync(join(fx.data, "keys")), ["k2.key"]);
  const db = new Database(join(fx.data, "keep.db"), { readonly: true });
  assert.equal(db.prepare("SELECT DISTINCT key_id FROM secrets").all(), [{ key_id: "k2" }]);
  db.close();
  const s = new SecretStore(fx.data);
  for (const [p, v] of Object.entries(values)) assert.is(s.get(p)!.toString("utf8"), v);
  s.close();
});

test("a copy of DIR made while no Keep process writes is a working data directory", async () => {
  const copy = join(fx.dir, "copied-data");
  cpSync(fx.data, copy, { recursive: true });
  const token = issue({ ...fx, data: copy }, "ci-app");
  const srv = await serve({ ...fx, data: copy });
  try {
    for (const [p, v] of Object.entries(values)) assert.is((await call(srv, fx.certs.caPem, "GET", `/v1/secrets/${p}`, { token })).json().value, v);
  } finally {
    await srv.stop();
  }
});

test("DIR keeps only a SHA-256 of each token", () => {
  const db = new Database(join(fx.data, "keep.db"), { readonly: true });
  const rows = db.prepare("SELECT identity, hash FROM tokens").all() as { hash: Buffer }[];
  db.close();
  assert.ok(rows.length > 0);
  for (const r of rows) assert.is(r.hash.length, 32);
});

test.run();
