// `rotate_secret` end to end (docs/mcp.md, docs/secrets.md): the MCP tool against a real `spool run`
// with a runtime pool: add → a webhook signed with the new value verifies → list → delete → the same
// signature is refused. The value never appears in the tool's result, its audit line or the
// instance's audit record.
import { createHash, createHmac, randomBytes } from "node:crypto";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makeTempDir } from "../helpers/temp-dir.js";
import { auditLines } from "../app/helpers/admin-e2e.js";
import { call } from "../app/helpers/http.js";
import { spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "../app/helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile, type Ports } from "../app/helpers/spoolfile.js";
import { McpClient } from "./mcp-client.js";

const KEY = randomBytes(32).toString("base64");
const NEW_VALUE = `rotated-${randomBytes(6).toString("hex")}`;
const ROUTES = `
secrets {
  secret "partner" { runtime on; max_versions 4 }
}
/hooks/signed { auth hmac secret_ref "partner"; pull { path /signed } }
`;

const temp = makeTempDir("mcp-rotate");
const test = suite("spool mcp serve: rotate_secret against a running instance");
let ports: Ports;
let configPath: string;
let proc: SpoolProcess;

function signedHeaders(secret: string, path: string, body: string): Record<string, string> {
  const ts = String(Math.floor(Date.now() / 1000));
  const bodyHash = createHash("sha256").update(body).digest("hex");
  const signature = createHmac("sha256", secret).update(`POST\n${path}\n${ts}\n${bodyHash}`).digest("hex");
  return { "content-type": "application/json", "x-signature": signature, "x-timestamp": ts, "x-nonce": randomBytes(8).toString("hex") };
}

async function sendSigned(secret: string): Promise<number> {
  const body = JSON.stringify({ n: randomBytes(4).toString("hex") });
  return (await call(`${urls(ports).ingress}/hooks/signed`, { headers: signedHeaders(secret, "/hooks/signed", body), body })).status;
}

test.before(async () => {
  ports = await freePorts();
  configPath = writeSpoolfile(temp.path, spoolfileText(ports, ROUTES));
  proc = spawnSpool(["run", "--config", configPath, "--db", join(temp.path, "spool.db")], { env: { SPOOL_SECRET_ENCRYPTION_KEY: KEY } });
  await waitHealthy(proc, urls(ports).admin);
});

test.after(async () => {
  await stopSpool(proc);
  temp.cleanup();
});

test("add, prove, list, delete: the instance verifies with the added version until it is deleted", async () => {
  assert.is(await sendSigned(NEW_VALUE), 401, "nothing in the pool yet");
  const client = await McpClient.session(["--config", configPath, "--db", join(temp.path, "spool.db"), "--role", "admin", "--enable-mutations", "--principal", "sec-bot"]);

  const added = await client.ok("rotate_secret", { operation: "add", name: "partner", value: NEW_VALUE, reason: "quarterly rotation" });
  const id = added.id as string;
  assert.match(id, /^sec_[0-9a-f]{16}$/);
  assert.is(added.operation, "add");
  assert.equal((added.response as { id: string }).id, id);
  assert.equal(added.audit, { reason: "quarterly rotation", actor: "sec-bot", principal: "sec-bot" });
  assert.is(await sendSigned(NEW_VALUE), 202, "a webhook signed with the added value verifies");

  const listed = await client.ok("rotate_secret", { operation: "list", name: "partner" });
  assert.equal(((listed.response as { versions: { id: string }[] }).versions).map((v) => v.id), [id]);

  const deleted = await client.ok("rotate_secret", { operation: "delete", name: "partner", id, reason: "old version retired" });
  assert.equal([deleted.operation, deleted.id], ["delete", id]);
  assert.is(await sendSigned(NEW_VALUE), 401, "the deleted version no longer verifies");

  const missing = await client.call("rotate_secret", { operation: "delete", name: "partner", id, reason: "again" });
  assert.ok(missing.isError);
  assert.match(missing.text, /^code=secret_id_not_found /);
  await client.close();

  // The tool's audit lines (stderr) and the instance's own audit records: never the value.
  const lines = client.auditLines();
  // rotate_secret is a mutating tool, so its list calls are audited too (docs/mcp.md).
  assert.equal(lines.map((l) => [l.tool, l.result, l.metadata.operation]), [
    ["rotate_secret", "ok", "add"],
    ["rotate_secret", "ok", "list"],
    ["rotate_secret", "ok", "delete"],
    ["rotate_secret", "error", "delete"],
  ]);
  assert.not.match(JSON.stringify(lines) + JSON.stringify([added, listed, deleted]), NEW_VALUE);
  const instanceAudit = auditLines(proc.output()).filter((r) => r.tool === "secret_add" || r.tool === "secret_delete");
  assert.equal(instanceAudit.map((r) => [r.tool, r.result, r.actor]), [
    ["secret_add", "ok", "sec-bot"],
    ["secret_delete", "ok", "sec-bot"],
    ["secret_delete", "secret_id_not_found", "sec-bot"],
  ]);
  assert.not.match(proc.output(), NEW_VALUE);
});

test.run();
