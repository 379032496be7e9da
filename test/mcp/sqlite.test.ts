// `spool mcp serve` beside a running `spool run` on SQLite: the queue tools open the database file
// directly (read-only unless mutations are on) and answer what the instance's Admin API answers for
// the same question, because they run the same operations. Mutations change what the instance
// serves, each audited; management writes and config_apply reload the instance through the pid
// file; the runtime tools report, tail, reload, stop and start it.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makeTempDir } from "../helpers/temp-dir.js";
import { call, eventually, pullCall } from "../app/helpers/http.js";
import { spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "../app/helpers/spool-process.js";
import { freePorts, urls, writeSpoolfile, type Ports } from "../app/helpers/spoolfile.js";
import { isAlive, waitDead } from "../helpers/processes.js";
import { expectedHash, McpClient } from "./mcp-client.js";

const temp = makeTempDir("mcp-sqlite");
const test = suite("spool mcp serve: SQLite beside spool run");

let ports: Ports;
let base: ReturnType<typeof urls>;
let proc: SpoolProcess;
let configPath: string;
const dbPath = join(temp.path, "data", "spool.db");
const pidFile = join(temp.path, "spool.pid");
const logPath = join(temp.path, "runtime.log");
let read: McpClient;
let operate: McpClient;
const ADMIN = { authorization: "Bearer admin-token" };

function spoolfile(extra = ""): string {
  return `ingress { listen 127.0.0.1:${ports.ingress} }
pull_api { listen 127.0.0.1:${ports.pull}; auth token raw:pull-token }
admin_api { listen 127.0.0.1:${ports.admin}; auth token raw:admin-token }
observability {
  access_log off
  runtime_log { level info; output file; path ${logPath} }
}
/hooks/jobs { pull { path /jobs } }
/hooks/shop {
  application "shop"
  endpoint_name "orders"
  pull { path /shop }
}
/hooks/spare { pull { path /spare } }
${extra}`;
}

async function adminGet(path: string): Promise<any> {
  const reply = await call(`${base.admin}${path}`, { method: "GET", headers: ADMIN });
  assert.is(reply.status, 200, `${path}: ${reply.text}`);
  return reply.json;
}

async function ingest(path: string, body: string): Promise<void> {
  const reply = await call(`${base.ingress}${path}`, { body, headers: { "content-type": "application/json" } });
  assert.is(reply.status, 202, reply.text);
}

async function startSpool(): Promise<void> {
  proc = spawnSpool(["run", "--config", configPath, "--db", dbPath, "--pid-file", pidFile]);
  await waitHealthy(proc, base.admin);
  await eventually(() => (readFileSync(pidFile, "utf8").trim() !== "" ? true : undefined), 10_000, "pid file");
}

const mcpArgs = () => ["--config", configPath, "--db", dbPath, "--pid-file", pidFile];

test.before(async () => {
  ports = await freePorts();
  base = urls(ports);
  configPath = writeSpoolfile(temp.path, spoolfile());
  await startSpool();
  for (let i = 0; i < 3; i++) await ingest("/hooks/jobs", `{"job":${i}}`);
  for (let i = 0; i < 2; i++) await ingest("/hooks/shop", `{"order":${i}}`);
  // One dead letter, from a pull nack with dead.
  const leased = await pullCall(`${base.pull}/jobs`, "dequeue", "pull-token", { batch: 1 });
  assert.is(leased.status, 200, leased.text);
  const nacked = await pullCall(`${base.pull}/jobs`, "nack", "pull-token", { lease_id: leased.json.items[0].lease_id, dead: true, reason: "bad job" });
  assert.is(nacked.status, 204, nacked.text);
  read = await McpClient.session(mcpArgs());
  operate = await McpClient.session([...mcpArgs(), "--role", "operate", "--enable-mutations", "--principal", "ops-bot"]);
});

test.after(async () => {
  await read?.close();
  await operate?.close();
  if (proc) await stopSpool(proc);
  temp.cleanup();
});

test("read tools answer exactly what the Admin API answers (the same operations, run on the file)", async () => {
  const pairs: [string, Record<string, unknown>, string][] = [
    ["messages_list", { route: "/hooks/jobs", include_payload: true }, "/messages?route=/hooks/jobs&include_payload=true"],
    ["messages_list", { application: "shop", endpoint_name: "orders" }, "/messages?application=shop&endpoint_name=orders"],
    ["messages_list", { state: "dead", limit: 5 }, "/messages?state=dead&limit=5"],
    ["dlq_list", {}, "/dlq"],
    ["attempts_list", { route: "/hooks/jobs" }, "/attempts?route=/hooks/jobs"],
    ["management_model", {}, "/management/model"],
  ];
  for (const [tool, args, path] of pairs) {
    const viaMcp = await read.ok(tool, args);
    assert.equal(viaMcp, await adminGet(path), tool);
  }
  const listed = await read.ok("messages_list", { route: "/hooks/jobs" });
  assert.is((listed.items as unknown[]).length, 3);
  assert.is(((await read.ok("dlq_list")).items as { dead_reason?: string }[]).length, 1);
});

test("backlog tools and admin_health read the file", async () => {
  const top = await read.ok("backlog_top_queued", { limit: 10 });
  const viaApi = await adminGet("/backlog/top_queued?limit=10");
  assert.equal([top.queued_total, top.queue_total, top.items && (top.items as { route: string; queued: number }[]).map((i) => [i.route, i.queued])], [viaApi.queued_total, viaApi.queue_total, viaApi.items.map((i: any) => [i.route, i.queued])]);
  const oldest = await read.ok("backlog_oldest_queued", { route: "/hooks/shop" });
  assert.is(oldest.returned, 2);
  const aging = await read.ok("backlog_aging_summary", { states: ["queued", "dead"] });
  assert.equal(aging.states, ["queued", "dead"]);
  const trends = await read.ok("backlog_trends", { window: "1h", step: "5m" });
  assert.is(trends.window, "3600s");
  const health = await read.ok("admin_health");
  assert.equal([health.ok, health.db_exists, health.db_readable], [true, true, true]);
  const queue = health.queue as { source: string; total: number; by_state: Record<string, number> };
  assert.equal([queue.source, queue.total, queue.by_state], ["sqlite_local", 5, { queued: 4, leased: 0, dead: 1 }]);
  assert.equal((health.admin_api as { ok: boolean; status_code: number }).status_code, 200);
});

test("a read session sees what the instance writes meanwhile (WAL), and an Admin error keeps its code", async () => {
  await ingest("/hooks/spare", "{}");
  const spare = await read.ok("messages_list", { route: "/hooks/spare" });
  assert.is((spare.items as unknown[]).length, 1);
  const unknown = await read.call("messages_list", { application: "shop", endpoint_name: "nobody" });
  assert.ok(unknown.isError);
  assert.match(unknown.text, /^code=managed_endpoint_not_found detail=/);
});

test("by-id mutations: the instance serves the change; audit line with id_mutation and exact input_hash", async () => {
  const ids = ((await read.ok("messages_list", { route: "/hooks/jobs", state: "queued" })).items as { id: string }[]).map((m) => m.id);
  const args = { ids: [ids[0], ids[0], "evt_missing"], reason: "stuck job", request_id: "r-1" };
  const canceled = await operate.ok("messages_cancel", args);
  assert.equal(canceled, { canceled: 1, audit: { reason: "stuck job", actor: "ops-bot", request_id: "r-1", principal: "ops-bot" } });
  const viaApi = await adminGet("/messages?state=canceled");
  assert.equal(viaApi.items.map((m: { id: string }) => m.id), [ids[0]]);

  const noReason = await operate.call("messages_cancel", { ids: [ids[1]] });
  assert.ok(noReason.isError);
  assert.match(noReason.text, /"reason"/);
  const wrongActor = await operate.call("messages_cancel", { ids: [ids[1]], reason: "x", actor: "someone-else" });
  assert.match(wrongActor.text, /"actor"/);
  assert.is((await adminGet("/messages?state=canceled")).items.length, 1);

  const lines = operate.auditLines().filter((l) => l.tool === "messages_cancel");
  assert.is(lines.length, 3);
  assert.equal(lines[0].metadata, { kind: "id_mutation", operation: "messages_cancel", ids_requested: 3, ids_unique: 2, changed: 1 });
  assert.equal([lines[0].result, lines[0].input_hash, lines[0].principal, lines[0].role, lines[0].actor], ["ok", expectedHash(args), "ops-bot", "operate", "ops-bot"]);
  assert.equal([lines[1].result, lines[2].result], ["error", "error"]);
});

test("filter mutations: preview counts, execute changes; managed routes need their selector (the Admin rule)", async () => {
  const preview = await operate.ok("messages_resume_by_filter", { route: "/hooks/jobs", state: "canceled", preview_only: true, reason: "check" });
  assert.equal([preview.matched, preview.changed, preview.preview_only], [1, 0, true]);
  const done = await operate.ok("messages_resume_by_filter", { route: "/hooks/jobs", reason: "resume all" });
  assert.equal([done.matched, done.changed], [1, 1]);
  assert.is((await adminGet("/messages?state=canceled")).items.length, 0);
  const managed = await operate.call("messages_cancel_by_filter", { route: "/hooks/shop", reason: "x" });
  assert.match(managed.text, /^code=managed_selector_required/);
  const scoped = await operate.ok("messages_cancel_by_filter", { application: "shop", endpoint_name: "orders", preview_only: true, reason: "count" });
  assert.is(scoped.matched, 2);
  const line = operate.auditLines().find((l) => l.tool === "messages_resume_by_filter" && l.metadata.preview_only === false)!;
  assert.equal(line.metadata, { kind: "filter_mutation", operation: "resume_by_filter", matched: 1, changed: 1, preview_only: false });
});

test("publish: to a route and to a managed endpoint, all or nothing, duplicates named by item", async () => {
  const payload = Buffer.from('{"hello":1}').toString("base64");
  const published = await operate.ok("messages_publish", { items: [{ id: "pub-1", payload_b64: payload, route: "/hooks/jobs" }], reason: "replay" });
  assert.equal([published.published, published.ids], [1, ["pub-1"]]);
  const shown = await adminGet("/messages?route=/hooks/jobs&include_payload=true");
  assert.ok(shown.items.some((m: { id: string; payload_b64: string }) => m.id === "pub-1" && m.payload_b64 === payload));
  const scoped = await operate.ok("messages_publish", { items: [{ id: "pub-2", payload_b64: payload, application: "shop", endpoint_name: "orders" }], reason: "replay" });
  assert.is(scoped.published, 1);
  const duplicate = await operate.call("messages_publish", { items: [{ id: "pub-3", payload_b64: payload, route: "/hooks/jobs" }, { id: "pub-1", payload_b64: payload, route: "/hooks/jobs" }], reason: "again" });
  assert.match(duplicate.text, /^code=duplicate_id item_index=1 /);
  assert.not.ok((await adminGet("/messages?route=/hooks/jobs")).items.some((m: { id: string }) => m.id === "pub-3"));
  const mixed = await operate.call("messages_publish", { items: [{ id: "a", payload_b64: payload, route: "/hooks/jobs" }, { id: "b", payload_b64: payload, application: "shop", endpoint_name: "orders" }], reason: "x" });
  assert.match(mixed.text, /"items"/);
  const lines = operate.auditLines().filter((l) => l.tool === "messages_publish");
  assert.equal(lines[0].metadata, { kind: "publish", operation: "messages_publish", items: 1, published: 1 });
  assert.equal(lines.map((l) => l.result), ["ok", "ok", "error", "error"]);
});

test("dlq tools act on the dead letter", async () => {
  const [dead] = (await read.ok("dlq_list")).items as { id: string }[];
  const requeued = await operate.ok("dlq_requeue", { ids: [dead.id], reason: "fixed the worker" });
  assert.is(requeued.requeued, 1);
  assert.is((await adminGet("/dlq")).items.length, 0);
});

test("the other by-id tools: resume, requeue and dlq_delete, each served by the instance", async () => {
  const [target] = ((await read.ok("messages_list", { route: "/hooks/jobs", state: "queued" })).items as { id: string }[]).map((m) => m.id);
  assert.is((await operate.ok("messages_cancel", { ids: [target], reason: "pause" })).canceled, 1);
  assert.is((await operate.ok("messages_resume", { ids: [target], reason: "go on" })).resumed, 1);
  assert.is((await operate.ok("messages_cancel", { ids: [target], reason: "pause again" })).canceled, 1);
  const preview = await operate.ok("messages_requeue_by_filter", { route: "/hooks/jobs", state: "canceled", preview_only: true, reason: "count" });
  assert.equal([preview.matched, preview.changed], [1, 0]);
  assert.is((await operate.ok("messages_requeue", { ids: [target], reason: "retry" })).requeued, 1);
  assert.is((await adminGet("/messages?state=queued&route=/hooks/jobs")).items.filter((m: { id: string }) => m.id === target).length, 1);
  const leased = await pullCall(`${base.pull}/jobs`, "dequeue", "pull-token", { batch: 1 });
  await pullCall(`${base.pull}/jobs`, "nack", "pull-token", { lease_id: leased.json.items[0].lease_id, dead: true });
  const [dead] = (await read.ok("dlq_list")).items as { id: string }[];
  assert.is((await operate.ok("dlq_delete", { ids: [dead.id], reason: "garbage" })).deleted, 1);
  assert.is((await adminGet("/dlq")).items.length, 0);
  const kinds = operate.auditLines().filter((l) => ["messages_resume", "messages_requeue", "dlq_delete"].includes(l.tool));
  assert.equal(kinds.map((l) => [l.tool, l.result, l.metadata.changed]), [["messages_resume", "ok", 1], ["messages_requeue", "ok", 1], ["dlq_delete", "ok", 1]]);
});

test("a read-only session cannot change the file even through a leaked handle: the store is opened read-only", async () => {
  // Without --enable-mutations no mutating tool is listed or callable, and the database was opened
  // with SQLite's read-only flag: the instance still writes beside it.
  const tools = await read.toolNames();
  assert.not.ok(tools.some((name) => name.startsWith("dlq_re") || name.includes("cancel")));
  await ingest("/hooks/spare", "{}");
  assert.is(((await read.ok("messages_list", { route: "/hooks/spare" })).items as unknown[]).length, 2);
});

test("management endpoint upsert and delete with write_and_reload: the instance serves the new mapping", async () => {
  const admin = await McpClient.session([...mcpArgs(), "--role", "admin", "--enable-mutations", "--principal", "ops-bot"]);
  const upsert = await admin.ok("management_endpoint_upsert", { application: "shop", endpoint_name: "spare", route: "/hooks/spare", mode: "write_and_reload", reload_timeout: "10s", reason: "map spare" });
  assert.equal([upsert.ok, upsert.action, upsert.route, upsert.applied, upsert.reloaded], [true, "created", "/hooks/spare", true, true]);
  const model = await adminGet("/management/model");
  assert.match(JSON.stringify(model), /"spare"/);
  assert.match(readFileSync(configPath, "utf8"), /endpoint_name "spare"/);
  // A route with a backlog cannot lose its mapping: the Admin rule, here on the file.
  const refused = await admin.call("management_endpoint_delete", { application: "shop", endpoint_name: "spare", mode: "write_and_reload", reason: "unmap" });
  assert.match(refused.text, /^code=management_route_backlog_active/);
  const spare = ((await read.ok("messages_list", { route: "/hooks/spare" })).items as { id: string }[]).map((m) => m.id);
  await operate.call("messages_cancel_by_filter", { application: "shop", endpoint_name: "spare", reason: "drain" });
  assert.is(spare.length, 2);
  const removed = await admin.ok("management_endpoint_delete", { application: "shop", endpoint_name: "spare", mode: "write_and_reload", reason: "unmap" });
  assert.equal([removed.action, removed.reloaded], ["deleted", true]);
  assert.not.match(JSON.stringify(await adminGet("/management/model")), /"spare"/);
  await admin.close();
  const line = admin.auditLines().find((l) => l.tool === "management_endpoint_upsert")!;
  assert.equal(line.metadata, { kind: "config_mutation", operation: "upsert_endpoint", mode: "write_and_reload", outcome: "created" });
});

test("instance_reload and a management write_and_reload prove a reload of a Spoolfile that starts with a UTF-8 BOM", async () => {
  // spool run fingerprints the file's bytes, BOM included; the decoded text has no BOM.
  writeFileSync(configPath, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(spoolfile("/hooks/bom { pull { path /bom } }\n"))]));
  const admin = await McpClient.session([...mcpArgs(), "--role", "admin", "--enable-mutations", "--enable-runtime-control", "--principal", "ops-bot"]);
  try {
    const reloaded = await admin.ok("instance_reload", { reason: "pick up the BOM file", timeout: "5s" });
    assert.equal([reloaded.reloaded, reloaded.pid], [true, Number(readFileSync(pidFile, "utf8"))]);
    await ingest("/hooks/bom", "{}");
    const upsert = await admin.ok("management_endpoint_upsert", { application: "shop", endpoint_name: "bom", route: "/hooks/bom", mode: "write_and_reload", reload_timeout: "5s", reason: "map bom" });
    assert.equal([upsert.applied, upsert.reloaded], [true, true]);
    assert.match(JSON.stringify(await adminGet("/management/model")), /"bom"/);
    assert.ok(readFileSync(configPath).subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])), "the rewrite keeps the BOM");
  } finally {
    await admin.close();
  }
});

test("runtime tools: status, logs tail, config_apply write_and_reload, reload, stop and start", async () => {
  const admin = await McpClient.session([...mcpArgs(), "--role", "admin", "--enable-mutations", "--enable-runtime-control", "--principal", "ops-bot"]);
  const pid = Number(readFileSync(pidFile, "utf8"));
  const status = await admin.ok("instance_status");
  assert.equal([status.running, status.pid, status.admin_ok], [true, pid, true]);
  const tail = await admin.ok("instance_logs_tail", { max_lines: 5 });
  assert.is(tail.path, logPath);
  assert.ok((tail.lines as string[]).length > 0 && (tail.lines as string[]).length <= 5);

  const applied = await admin.ok("config_apply", { content: spoolfile("/hooks/new { pull { path /new } }\n"), mode: "write_and_reload", reload_timeout: "10s", reason: "add /hooks/new" });
  assert.equal([applied.ok, applied.applied, applied.reloaded], [true, true, true]);
  await ingest("/hooks/new", "{}");

  const reloaded = await admin.ok("instance_reload", { reason: "pick up the file" });
  assert.equal([reloaded.reloaded, reloaded.pid], [true, pid]);

  assert.match((await admin.call("instance_stop", {})).text, /"reason"/);
  const stopped = await admin.ok("instance_stop", { reason: "maintenance", timeout: "15s" });
  assert.equal([stopped.stopped, stopped.pid], [true, pid]);
  await proc.exited;
  assert.equal((await admin.ok("instance_status")).running, false);
  assert.equal((await admin.ok("instance_stop", { reason: "again" })).already_stopped, true);

  const started = await admin.ok("instance_start", { reason: "back up", timeout: "20s" });
  assert.equal([started.started, started.already_running], [true, false]);
  const newPid = started.pid as number;
  assert.ok(isAlive(newPid));
  assert.is(((await read.ok("messages_list", { route: "/hooks/new" })).items as unknown[]).length, 1);
  assert.equal((await admin.ok("instance_start", { reason: "twice" })).already_running, true);
  const stoppedAgain = await admin.ok("instance_stop", { reason: "end of test", timeout: "15s" });
  assert.is(stoppedAgain.pid, newPid);
  assert.ok(await waitDead(newPid, 5000));
  await admin.close();
  const control = admin.auditLines().filter((l) => l.tool.startsWith("instance_"));
  assert.equal(control.map((l) => [l.tool, l.result, l.metadata.outcome ?? null]), [
    ["instance_reload", "ok", "reloaded"],
    ["instance_stop", "error", null],
    ["instance_stop", "ok", "stopped"],
    ["instance_stop", "ok", "already_stopped"],
    ["instance_start", "ok", "started"],
    ["instance_start", "ok", "already_running"],
    ["instance_stop", "ok", "stopped"],
  ]);
  proc = undefined as unknown as SpoolProcess;
});

test.run();
