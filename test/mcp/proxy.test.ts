// `spool mcp serve` with the memory and PostgreSQL backends: the queue tools ask the running
// instance's Admin API (address and first token from the Spoolfile), with the audit headers of the
// call, reads retried on 5xx and mutations not, and --admin-endpoint-allowlist checked before
// anything is sent.
import { createServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { readFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { makeTlsMaterial } from "../helpers/tls-material.js";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makeTempDir } from "../helpers/temp-dir.js";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn } from "../helpers/skip.js";
import { call } from "../app/helpers/http.js";
import { freePort, spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "../app/helpers/spool-process.js";
import { freePorts, urls, writeSpoolfile, type Ports } from "../app/helpers/spoolfile.js";
import { McpClient } from "./mcp-client.js";

const temp = makeTempDir("mcp-proxy");
const test = suite("spool mcp serve: proxy to the Admin API (memory, PostgreSQL), allowlist");
const ADMIN = { authorization: "Bearer admin-token" };

function spoolfile(ports: Ports, backend: string): string {
  return `ingress { listen 127.0.0.1:${ports.ingress} }
pull_api { listen 127.0.0.1:${ports.pull}; auth token raw:pull-token }
admin_api { listen 127.0.0.1:${ports.admin}; auth token raw:admin-token; auth token raw:second-token }
observability { access_log off }
/hooks/jobs {
  queue ${backend}
  pull { path /jobs }
}
`;
}

interface Instance {
  ports: Ports;
  base: ReturnType<typeof urls>;
  proc: SpoolProcess;
  configPath: string;
}

async function startInstance(name: string, backend: string, args: string[] = [], env: Record<string, string> = {}): Promise<Instance> {
  const ports = await freePorts();
  const base = urls(ports);
  const configPath = writeSpoolfile(temp.path, spoolfile(ports, backend), `${name}.Spoolfile`);
  const proc = spawnSpool(["run", "--config", configPath, ...args], { env });
  await waitHealthy(proc, base.admin);
  for (let i = 0; i < 2; i++) {
    const reply = await call(`${base.ingress}/hooks/jobs`, { body: `{"n":${i}}` });
    assert.is(reply.status, 202, reply.text);
  }
  return { ports, base, proc, configPath };
}

async function adminGet(instance: Instance, path: string): Promise<any> {
  const reply = await call(`${instance.base.admin}${path}`, { method: "GET", headers: ADMIN });
  assert.is(reply.status, 200, reply.text);
  return reply.json;
}

/** The checks every proxied backend passes: reads equal the Admin API's, a mutation carries the audit headers. */
async function proxiedScenario(instance: Instance, dbPath: string): Promise<void> {
  const read = await McpClient.session(["--config", instance.configPath, "--db", dbPath]);
  const viaMcp = await read.ok("messages_list", { route: "/hooks/jobs" });
  assert.equal(viaMcp, await adminGet(instance, "/messages?route=/hooks/jobs"));
  assert.is((viaMcp.items as unknown[]).length, 2);
  const health = await read.ok("admin_health");
  assert.equal([health.ok, (health.queue as { source: string }).source, (health.queue as { total: number }).total], [true, "admin_api", 2]);
  const top = await read.ok("backlog_top_queued");
  const topViaApi = await adminGet(instance, "/backlog/top_queued");
  // Ages move with the clock between the two calls; the counts must be equal.
  assert.equal([top.queue_total, top.queued_total, (top.items as { queued: number }[]).map((i) => i.queued)], [topViaApi.queue_total, topViaApi.queued_total, topViaApi.items.map((i: { queued: number }) => i.queued)]);
  await read.close();

  const operate = await McpClient.session(["--config", instance.configPath, "--db", dbPath, "--role", "operate", "--enable-mutations", "--principal", "ops-bot"]);
  const [first] = viaMcp.items as { id: string }[];
  const canceled = await operate.ok("messages_cancel", { ids: [first.id], reason: "proxied cancel", request_id: "req-9" });
  assert.equal(canceled, { canceled: 1, audit: { reason: "proxied cancel", actor: "ops-bot", request_id: "req-9", principal: "ops-bot" } });
  assert.equal((await adminGet(instance, "/messages?state=canceled")).items.map((m: { id: string }) => m.id), [first.id]);
  const refused = await operate.call("messages_publish", { items: [{ id: "p-1", payload_b64: "e30=", route: "/hooks/missing" }], reason: "x" });
  assert.match(refused.text, /^code=route_not_found item_index=0 detail=/);
  await operate.close();
  assert.equal(operate.auditLines().map((l) => [l.tool, l.result]), [["messages_cancel", "ok"], ["messages_publish", "error"]]);
  // The instance's own audit record names the principal and reason the tool sent.
  const instanceAudit = instance.proc
    .output()
    .split("\n")
    .filter((line) => line.includes('"tool":"messages_cancel"'))
    .map((line) => JSON.parse(line));
  assert.equal(instanceAudit.map((r) => [r.actor, r.reason, r.request_id, r.result]), [["ops-bot", "proxied cancel", "req-9", "ok"]]);
}

let memory: Instance;

test.before(async () => {
  memory = await startInstance("memory", "memory");
});

test.after(async () => {
  if (memory) await stopSpool(memory.proc);
  temp.cleanup();
});

test("memory backend: reads equal the Admin API's, mutations carry reason, actor and request id", async () => {
  await proxiedScenario(memory, join(temp.path, "never.db"));
});

test("allowlist: host:port and URL entries admit, others refuse before anything is sent; malformed entries refuse", async () => {
  const port = memory.ports.admin;
  const admitted = [`127.0.0.1:${port}`, `http://127.0.0.1:${port}`, `http://127.0.0.1:${port}/`, `LOCALHOST:1,127.0.0.1:${port}`];
  for (const list of admitted) {
    const client = await McpClient.session(["--config", memory.configPath, "--admin-endpoint-allowlist", list]);
    assert.not.ok((await client.call("messages_list", {})).isError, list);
    await client.close();
  }
  const refused = [`127.0.0.1:${port + 1}`, `https://127.0.0.1:${port}`, `http://127.0.0.1:${port}/other`, "not a host", `http://127.0.0.1:${port}/?q=1`];
  for (const list of refused) {
    const client = await McpClient.session(["--config", memory.configPath, "--admin-endpoint-allowlist", list]);
    const reply = await client.call("messages_list", {});
    assert.ok(reply.isError, list);
    assert.match(reply.text, /allowlist/, list);
    await client.close();
  }
});

test("reads are retried on 5xx (three attempts), mutations are not; Admin errors become code=… detail=…", async () => {
  let hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url} ${req.headers.authorization}`);
    res.writeHead(503, { "content-type": "application/json" });
    res.end(JSON.stringify({ code: "store_unavailable", detail: "try later" }));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const ports = await freePorts();
  const configPath = writeSpoolfile(temp.path, spoolfile({ ...ports, admin: port }, "memory"), "flaky.Spoolfile");
  const client = await McpClient.session(["--config", configPath, "--role", "operate", "--enable-mutations", "--principal", "p"]);
  const readReply = await client.call("dlq_list", { limit: 5 });
  assert.is(readReply.text, "code=store_unavailable detail=try later");
  assert.equal(hits, Array(3).fill("GET /dlq?limit=5 Bearer admin-token"));
  hits = [];
  const write = await client.call("dlq_delete", { ids: ["x"], reason: "r" });
  assert.ok(write.isError);
  assert.equal(hits, ["POST /dlq/delete Bearer admin-token"]);
  await client.close();
  server.close();
});

test("TLS: an untrusted certificate is accepted on loopback only", async () => {
  const tls = makeTlsMaterial();
  const external = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === "IPv4" && !a.internal)?.address;
  let hits = 0;
  const server = createHttpsServer({ cert: readFileSync(tls.file("stranger.pem")), key: readFileSync(tls.file("stranger.key")) }, (req, res) => {
    hits++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"items":[]}');
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "0.0.0.0", resolve));
  const tlsBlock = `tls { cert_file ${tls.file("stranger.pem")}; key_file ${tls.file("stranger.key")} }`;
  try {
    for (const host of ["127.0.0.1", ...(external ? [external] : [])]) {
      const ports = await freePorts();
      const text = spoolfile({ ...ports, admin: port }, "memory").replace(`admin_api { listen 127.0.0.1:${port};`, `admin_api { listen ${host}:${port}; ${tlsBlock};`);
      const configPath = writeSpoolfile(temp.path, text, `tls-${host}.Spoolfile`);
      const client = await McpClient.session(["--config", configPath]);
      const reply = await client.call("dlq_list", {});
      await client.close();
      if (host === "127.0.0.1") assert.equal([reply.isError, reply.structured], [false, { items: [] }]);
      else {
        assert.ok(reply.isError, host);
        assert.match(reply.text, /certificate/, reply.text);
      }
    }
    assert.is(hits, 1);
  } finally {
    server.close();
    tls.cleanup();
  }
});

test("an invalid config: queue tools fail naming the config, config tools still answer", async () => {
  const configPath = writeSpoolfile(temp.path, "ingress {\n", "broken.Spoolfile");
  const client = await McpClient.session(["--config", configPath]);
  const reply = await client.call("messages_list", {});
  assert.match(reply.text, /does not compile, so its queue backend is unknown/);
  assert.is((await client.ok("config_validate")).ok, false);
  await client.close();
});

test("rotate_secret always goes through the Admin API (role admin, principal, audit headers)", async () => {
  const admin = await McpClient.session(["--config", memory.configPath, "--role", "admin", "--enable-mutations", "--principal", "sec-bot"]);
  // No pool named "nope" is declared: whatever the instance answers, it is its answer, as code=… .
  const reply = await admin.call("rotate_secret", { operation: "list", name: "nope" });
  assert.ok(reply.isError);
  assert.match(reply.text, /^code=(secret_pool_not_found|not_found) /);
  await admin.close();
  assert.equal(admin.auditLines().map((l) => [l.tool, l.result, l.metadata.kind]), [["rotate_secret", "error", "secret_mutation"]]);
});

const dsn = postgresTestDsn();
if (dsn) {
  test("PostgreSQL backend: the same scenario through the instance's Admin API", async () => {
    const schemas = new PgSchemas(dsn, "spool_mcp");
    const instance = await startInstance("postgres", "postgres", ["--postgres-dsn", dsn], { SPOOL_POSTGRES_SCHEMA: schemas.next() });
    try {
      await proxiedScenario(instance, join(temp.path, "never.db"));
    } finally {
      await stopSpool(instance.proc);
      await schemas.dropAll();
    }
  });
}

test.run();
