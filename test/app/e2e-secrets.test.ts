// Runtime secret rotation end to end (docs/secrets.md, docs/api.md "Runtime secrets"): the built
// `spool run` on SQLite with SPOOL_SECRET_ENCRYPTION_KEY, its Admin API over HTTP, webhooks signed
// with added and deleted versions, the audit lines, a restart, and the database file's bytes.
import { createHash, createHmac, randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makeTempDir } from "../helpers/temp-dir.js";
import { adminClient, auditLines, type AdminClient } from "./helpers/admin-e2e.js";
import { call, eventually } from "./helpers/http.js";
import { spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "./helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile, type Ports } from "./helpers/spoolfile.js";

const KEY = randomBytes(32).toString("base64");
const BOOTSTRAP = "bootstrap-secret-value-7f3a";
const ADDED = "rotated-secret-value-c41d9e";

const ROUTES = `
secrets {
  secret "partner" { runtime on; max_versions 3; value raw:${BOOTSTRAP} }
  secret "static" { value raw:static-secret }
}
/hooks/signed { auth hmac secret_ref "partner" "static"; pull { path /signed } }
/hooks/gh { auth hmac { provider github; secret_ref "partner" }; pull { path /gh } }
`;

const temp = makeTempDir("e2e-secrets");
const dbPath = join(temp.path, "spool.db");
let ports: Ports;
let configPath: string;
let proc: SpoolProcess | undefined;
let admin: AdminClient;

function start(env: Record<string, string> = { SPOOL_SECRET_ENCRYPTION_KEY: KEY }): SpoolProcess {
  return spawnSpool(["run", "--config", configPath, "--db", dbPath], { env });
}

async function startHealthy(): Promise<void> {
  proc = start();
  await waitHealthy(proc, urls(ports).admin);
  admin = adminClient(urls(ports).admin);
}

/** A generic `auth hmac` request: X-Signature over METHOD, path, X-Timestamp and the body's hash. */
function signedHeaders(secret: string, path: string, body: string, timestampSeconds = Math.floor(Date.now() / 1000)): Record<string, string> {
  const ts = String(timestampSeconds);
  const bodyHash = createHash("sha256").update(body).digest("hex");
  const signature = createHmac("sha256", secret).update(`POST\n${path}\n${ts}\n${bodyHash}`).digest("hex");
  return { "content-type": "application/json", "x-signature": signature, "x-timestamp": ts, "x-nonce": randomBytes(8).toString("hex") };
}

async function sendSigned(secret: string, timestampSeconds?: number): Promise<number> {
  const body = JSON.stringify({ n: randomBytes(4).toString("hex") });
  const reply = await call(`${urls(ports).ingress}/hooks/signed`, { headers: signedHeaders(secret, "/hooks/signed", body, timestampSeconds), body });
  return reply.status;
}

async function sendGithub(secret: string): Promise<number> {
  const body = JSON.stringify({ gh: randomBytes(4).toString("hex") });
  const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  return (await call(`${urls(ports).ingress}/hooks/gh`, { headers: { "content-type": "application/json", "x-hub-signature-256": signature }, body })).status;
}

function sha256Canonical(object: Record<string, unknown>): string {
  const sorted = Object.fromEntries(Object.keys(object).sort().map((k) => [k, object[k]]));
  return `sha256:${createHash("sha256").update(JSON.stringify(sorted)).digest("hex")}`;
}

const test = suite("spool run: runtime secret rotation");

test.before(async () => {
  ports = await freePorts();
  configPath = writeSpoolfile(temp.path, spoolfileText(ports, ROUTES));
  await startHealthy();
});

test.after(async () => {
  if (proc) await stopSpool(proc);
  temp.cleanup();
});

test("the bootstrap value is seeded once as sec_bootstrap and verifies; the static secret too", async () => {
  const list = await admin("/secrets/partner");
  assert.is(list.status, 200);
  assert.equal(list.json, { name: "partner", versions: [{ id: "sec_bootstrap", not_before: list.json.versions[0].not_before }] });
  assert.is(await sendSigned(BOOTSTRAP), 202);
  assert.is(await sendSigned("static-secret"), 202);
  assert.is(await sendSigned("never-configured"), 401);
});

let addedId = "";

test("add: 201 {id, not_before, created_at}; the new version verifies generic and github webhooks", async () => {
  assert.is(await sendSigned(ADDED), 401);
  const reply = await admin("/secrets/partner", { body: { value: ADDED }, reason: "rotate partner", actor: "ops@example" });
  assert.is(reply.status, 201, reply.text);
  assert.equal(Object.keys(reply.json).sort(), ["created_at", "id", "not_before"]);
  assert.match(reply.json.id, /^sec_[0-9a-f]{16}$/);
  assert.match(reply.json.not_before, /Z$/);
  assert.not.match(reply.text, new RegExp(ADDED));
  addedId = reply.json.id;
  assert.is(await sendSigned(ADDED), 202);
  assert.is(await sendGithub(ADDED), 202);
  assert.is(await sendGithub("wrong"), 401);
});

test("list: newest not_before first, never a value; a not_after is shown", async () => {
  const future = new Date(Date.now() + 3600_000).toISOString();
  const later = await admin("/secrets/partner", { body: { value: "scheduled-value", not_before: future, not_after: new Date(Date.now() + 7200_000).toISOString() } });
  assert.is(later.status, 201, later.text);
  assert.ok(later.json.not_after);
  const list = await admin("/secrets/partner");
  const versions: { id: string; not_before: string }[] = list.json.versions;
  assert.equal(versions.map((v) => v.id).sort(), [later.json.id, addedId, "sec_bootstrap"].sort());
  assert.is(versions[0].id, later.json.id);
  // Newest not_before first; equal ones (added in the second the bootstrap was seeded) by id.
  for (let i = 1; i < versions.length; i++) {
    const [a, b] = [versions[i - 1], versions[i]];
    assert.ok(a.not_before > b.not_before || (a.not_before === b.not_before && a.id < b.id), JSON.stringify(versions));
  }
  assert.not.match(list.text, /secret-value|scheduled-value/);
  // Not valid yet: a webhook signed with it now is refused.
  assert.is(await sendSigned("scheduled-value"), 401);
  // The pool holds max_versions 3: a fourth add is 413.
  const full = await admin("/secrets/partner", { body: { value: "one-too-many" } });
  assert.is(full.status, 413);
  assert.is(full.json.code, "secret_pool_full");
  assert.is((await admin(`/secrets/partner/${later.json.id}`, { method: "DELETE" })).status, 204);
});

test("generic hmac checks a version's window at X-Timestamp", async () => {
  const nowS = Math.floor(Date.now() / 1000);
  const from = new Date((nowS + 60) * 1000).toISOString();
  const added = await admin("/secrets/partner", { body: { value: "window-value", not_before: from } });
  assert.is(added.status, 201, added.text);
  // Signed "in the future" (within the 5 min tolerance), at a time the version is valid.
  assert.is(await sendSigned("window-value", nowS + 120), 202);
  assert.is(await sendSigned("window-value", nowS), 401);
  assert.is((await admin(`/secrets/partner/${added.json.id}`, { method: "DELETE" })).status, 204);
});

test("delete: 204; a webhook signed with the deleted version gets 401; deleting it again is 404", async () => {
  const deleted = await admin("/secrets/partner/sec_bootstrap", { method: "DELETE", reason: "retire bootstrap" });
  assert.is(deleted.status, 204);
  assert.is(deleted.text, "");
  assert.is(await sendSigned(BOOTSTRAP), 401);
  assert.is(await sendSigned(ADDED), 202);
  const again = await admin("/secrets/partner/sec_bootstrap", { method: "DELETE" });
  assert.is(again.status, 404);
  assert.is(again.json.code, "secret_id_not_found");
});

test("validation: window, body, value, pools, labels, methods, audit headers first", async () => {
  const expect = async (path: string, options: Parameters<AdminClient>[1], status: number, code: string) => {
    const reply = await admin(path, options);
    assert.is(reply.status, status, `${path} ${reply.text}`);
    assert.is(reply.json?.code, code, reply.text);
    return reply;
  };
  const t0 = "2030-01-01T00:00:00Z";
  await expect("/secrets/partner", { body: { value: "v", not_before: t0, not_after: t0 } }, 400, "secret_invalid_window");
  await expect("/secrets/partner", { body: { value: "v", not_before: t0, not_after: "2029-01-01T00:00:00Z" } }, 400, "secret_invalid_window");
  await expect("/secrets/partner", { body: { value: "v", not_before: "yesterday" } }, 400, "invalid_body");
  await expect("/secrets/partner", { body: { value: "v", extra: 1 } }, 400, "invalid_body");
  const malformed = await expect("/secrets/partner", { rawBody: `{"value":"leaky-secret"} trailing` }, 400, "invalid_body");
  assert.not.match(malformed.text, /leaky-secret/);
  await expect("/secrets/partner", { body: { value: "   " } }, 400, "secret_value_empty");
  await expect("/secrets/partner", { body: {} }, 400, "secret_value_empty");
  await expect("/secrets/nobody", { body: { value: "v" } }, 404, "secret_pool_not_found");
  await expect("/secrets/nobody", {}, 404, "secret_pool_not_found");
  await expect("/secrets/static", { body: { value: "v" } }, 400, "secret_not_runtime");
  await expect("/secrets/static", {}, 400, "secret_not_runtime");
  await expect("/secrets/static/sec_0000000000000000", { method: "DELETE" }, 400, "secret_not_runtime");
  // Order: audit headers, then pool, then body.
  await expect("/secrets/nobody", { body: "not an object", reason: null }, 400, "audit_reason_required");
  await expect("/secrets/nobody", { rawBody: "{", reason: "x" }, 404, "secret_pool_not_found");
  // Names outside the label pattern are no endpoint.
  await expect("/secrets/%20bad", {}, 404, "not_found");
  await expect("/secrets/partner/bad%20id", { method: "DELETE" }, 404, "not_found");
  const put = await expect("/secrets/partner", { method: "PUT", body: { value: "v" } }, 405, "method_not_allowed");
  assert.is(put.headers.get("allow"), "GET, POST, HEAD");
  const post = await expect("/secrets/partner/sec_bootstrap", { body: {} }, 405, "method_not_allowed");
  assert.is(post.headers.get("allow"), "DELETE");
});

test("audit: one record per POST/DELETE, refused ones too; input_hash over the body without value; never the value", async () => {
  const body = { value: "audited-value", not_after: "2099-01-01T00:00:00Z" };
  const added = await admin("/secrets/partner", { body, reason: "audit check", actor: "alice" });
  assert.is(added.status, 201);
  const refused = await admin("/secrets/static", { body: { value: "audited-refused-value" }, reason: "refused check" });
  assert.is(refused.status, 400);
  const deleted = await admin(`/secrets/partner/${added.json.id}`, { method: "DELETE", reason: "cleanup" });
  assert.is(deleted.status, 204);
  await eventually(() => (auditLines(proc!.output()).some((l) => l.request_id === deleted.requestId) ? true : undefined), 5_000, "audit line");
  const lines = auditLines(proc!.output());
  const of = (requestId: string | undefined) => lines.filter((l) => l.request_id === requestId);
  const [add] = of(added.requestId);
  assert.is(of(added.requestId).length, 1);
  assert.is(add.tool, "secret_add");
  assert.is(add.result, "ok");
  assert.is(add.reason, "audit check");
  assert.is(add.actor, "alice");
  assert.equal(add.metadata, { kind: "secret_mutation", operation: "add", pool: "partner", secret_id: added.json.id, not_before: added.json.not_before, not_after: "2099-01-01T00:00:00.000Z" });
  assert.is(add.input_hash, sha256Canonical({ not_after: body.not_after }));
  const [refusal] = of(refused.requestId);
  assert.is(refusal.tool, "secret_add");
  assert.is(refusal.result, "secret_not_runtime");
  assert.equal(refusal.metadata, { kind: "secret_mutation", operation: "add", pool: "static" });
  assert.is(refusal.input_hash, sha256Canonical({}));
  const [removal] = of(deleted.requestId);
  assert.is(removal.tool, "secret_delete");
  assert.is(removal.result, "ok");
  assert.equal(removal.metadata, { kind: "secret_mutation", operation: "delete", pool: "partner", secret_id: added.json.id });
  // Every POST and DELETE this suite sent to a secrets endpoint was audited exactly once (a name
  // outside the label pattern or another method is no such endpoint: not_found, method_not_allowed).
  for (const sent of admin.mutations) {
    const endpoint = !["not_found", "method_not_allowed"].includes(sent.reply.json?.code);
    assert.is(of(sent.reply.requestId).length, endpoint ? 1 : 0, `${sent.method} ${sent.path}`);
  }
  const output = proc!.output();
  for (const value of [BOOTSTRAP, ADDED, "audited-value", "audited-refused-value", "leaky-secret", KEY]) assert.not.ok(output.includes(value), `output holds ${value}`);
});

test("versions survive a restart; the plaintext is nowhere in the database files", async () => {
  await stopSpool(proc!);
  for (const file of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) {
    if (!existsSync(file)) continue;
    const bytes = readFileSync(file);
    for (const value of [ADDED, BOOTSTRAP, "audited-value"]) assert.is(bytes.indexOf(Buffer.from(value)), -1, `${file} holds ${value}`);
  }
  assert.ok(readFileSync(dbPath).includes(Buffer.from(addedId)), "the version's row is in the database file");
  await startHealthy();
  const list = await admin("/secrets/partner");
  assert.equal(list.json.versions.map((v: { id: string }) => v.id), [addedId]);
  // Not re-seeded: the pool has a version.
  assert.is(await sendSigned(ADDED), 202);
  assert.is(await sendSigned(BOOTSTRAP), 401);
});

test("a restart with another key stops: exit 1 naming the pool and the version", async () => {
  await stopSpool(proc!);
  const other = start({ SPOOL_SECRET_ENCRYPTION_KEY: randomBytes(32).toString("base64url") });
  const { code } = await other.exited;
  assert.is(code, 1);
  assert.match(other.output(), /SPOOL_SECRET_ENCRYPTION_KEY/);
  assert.match(other.output(), new RegExp(`"partner" version ${addedId}`));
  await startHealthy();
});

test("an expired version is pruned before a full pool refuses an add, and counted in spool_runtime_secret_gc_pruned_total", async () => {
  const expiring = await admin("/secrets/partner", { body: { value: "expiring-value", not_after: new Date(Date.now() + 1500).toISOString() } });
  assert.is(expiring.status, 201, expiring.text);
  // Wait (no timing assertion) until the version's window has closed.
  await eventually(async () => ((await sendSigned("expiring-value")) === 401 ? true : undefined), 10_000, "the version to expire");
  const second = await admin("/secrets/partner", { body: { value: "second-value" } });
  assert.is(second.status, 201, second.text);
  // Three stored (max_versions 3), one expired: pruned, then this add succeeds.
  const third = await admin("/secrets/partner", { body: { value: "third-value" } });
  assert.is(third.status, 201, third.text);
  const ids = (await admin("/secrets/partner")).json.versions.map((v: { id: string }) => v.id);
  assert.not.ok(ids.includes(expiring.json.id));
  const metrics = await (await fetch(urls(ports).metrics)).text();
  assert.match(metrics, /^spool_runtime_secret_gc_pruned_total\{pool="partner"\} 1$/m);
});

test("start without the key, or with a bad one: exit 1 naming the variable, never its value", async () => {
  await stopSpool(proc!);
  // spawnSpool adds to the runner's environment, which does not set the variable.
  assert.is(process.env.SPOOL_SECRET_ENCRYPTION_KEY, undefined);
  const missing = spawnSpool(["run", "--config", configPath, "--db", dbPath]);
  assert.is((await missing.exited).code, 1);
  assert.match(missing.output(), /environment variable SPOOL_SECRET_ENCRYPTION_KEY to be set .*for secret "partner"/);
  const badValue = Buffer.from("sixteen-byte-key").toString("base64");
  const bad = start({ SPOOL_SECRET_ENCRYPTION_KEY: badValue });
  assert.is((await bad.exited).code, 1);
  assert.match(bad.output(), /SPOOL_SECRET_ENCRYPTION_KEY decodes to 16 bytes/);
  assert.match(bad.output(), /Spoolfile:\d+:\d+:/);
  assert.not.ok(bad.output().includes(badValue));
  const garbage = start({ SPOOL_SECRET_ENCRYPTION_KEY: "%%%not-base64-at-all%%%" });
  assert.is((await garbage.exited).code, 1);
  assert.match(garbage.output(), /SPOOL_SECRET_ENCRYPTION_KEY is not base64/);
  assert.not.ok(garbage.output().includes("not-base64-at-all"));
  proc = undefined;
});

test.run();
