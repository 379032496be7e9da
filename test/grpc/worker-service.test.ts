// The gRPC worker service end to end: a grpc-js client built from the committed .proto against the
// built `spool run` (SQLite). Every RPC with its batch forms and conflicts, the long poll and its
// cancellation, the status table, auth in metadata, lease scoping, the metrics it shares with the
// HTTP Pull API, and leases shared with the HTTP binding.
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makeTempDir } from "../helpers/temp-dir.js";
import { call, eventually, pullCall } from "../app/helpers/http.js";
import { freePort, spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "../app/helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "../app/helpers/spoolfile.js";
import { isFailure, workerClient, type Failure, type WorkerClient } from "./helpers/client.js";

const ROUTES = ["a", "b", "c", "d", "poll", "cancel", "deadline", "scope", "metrics", "mixed"].map((name) => `/hooks/${name} { pull { path /${name} } }`).join("\n");
const SCOPED = `/hooks/scoped { pull { path /scoped; auth token raw:scoped-token } }`;

// gRPC status codes (grpc-js `status`), by name for the assertions.
const OK_CANCELLED = 1;
const INVALID_ARGUMENT = 3;
const DEADLINE_EXCEEDED = 4;
const NOT_FOUND = 5;
const PERMISSION_DENIED = 7;
const FAILED_PRECONDITION = 9;
const UNAUTHENTICATED = 16;

const temp = makeTempDir("grpc-e2e");
let proc: SpoolProcess;
let u: ReturnType<typeof urls>;
let worker: WorkerClient;

const test = suite("spool run: the gRPC worker service");

test.before(async () => {
  const ports = await freePorts();
  const grpcPort = await freePort();
  u = urls(ports);
  const config = writeSpoolfile(temp.path, spoolfileText(ports, `${ROUTES}\n${SCOPED}`, { pullExtra: `; grpc_listen 127.0.0.1:${grpcPort}; max_batch 10; max_lease_batch 5` }));
  proc = spawnSpool(["run", "--config", config, "--db", join(temp.path, "spool.db")]);
  await waitHealthy(proc, u.admin);
  worker = workerClient(`127.0.0.1:${grpcPort}`, "pull-token");
});

test.after(async () => {
  worker.close();
  const result = await stopSpool(proc);
  temp.cleanup();
  assert.is(result.code, 0, `spool exited cleanly after SIGTERM\n${proc.output().slice(-2000)}`);
});

async function ingest(route: string, body = "x", headers: Record<string, string> = {}): Promise<string> {
  const posted = await call(`${u.ingress}/hooks/${route}`, { body, headers });
  assert.is(posted.status, 202);
  return posted.json.ids[0];
}

function failure(value: unknown, code: number, errorCode?: string): Failure {
  assert.ok(isFailure(value), `expected status ${code}, got ${JSON.stringify(value)}`);
  assert.is(value.code, code, value.details);
  if (errorCode) assert.equal(value.metadata.get("spool-error-code"), [errorCode]);
  return value;
}

const nowSeconds = () => Date.now() / 1000;

test("Dequeue leases a message with every DequeueItem field; Ack settles it, and a repeated Ack is a success", async () => {
  const id = await ingest("a", '{"n":1}', { "content-type": "application/json", "x-test": "1" });
  const { items } = await worker.call("Dequeue", { endpoint: "/a" });
  assert.is(items.length, 1);
  const [item] = items;
  assert.is(item.id, id);
  assert.ok(item.lease_id.length > 0);
  assert.ok(Buffer.isBuffer(item.payload));
  assert.is(item.payload.toString(), '{"n":1}');
  assert.ok(Object.entries(item.headers).some(([name, value]) => name.toLowerCase() === "x-test" && value === "1"), JSON.stringify(item.headers));
  assert.is(item.route, "/hooks/a");
  assert.is(item.target, "pull");
  assert.is(item.attempt, 1);
  assert.ok(Math.abs(item.received_at.seconds - nowSeconds()) < 60, "received_at is now");
  assert.ok(item.lease_until.seconds + item.lease_until.nanos / 1e9 > nowSeconds(), "lease_until is in the future");
  assert.is(item.next_run_at, null);
  assert.equal(await worker.call("Ack", { endpoint: "/a", lease_id: item.lease_id }), { acked: 1, conflicts: [] });
  assert.equal((await worker.call("Dequeue", { endpoint: "/a" })).items, []);
  assert.equal(await worker.call("Ack", { endpoint: "/a", lease_id: item.lease_id }), { acked: 1, conflicts: [] }, "idempotent repeat");
});

test("batch 0 is 1 and batch is clamped to max_batch; batch Ack and Nack answer OK listing their conflicts", async () => {
  for (let i = 0; i < 12; i++) await ingest("b", `m${i}`);
  assert.is((await worker.call("Dequeue", { endpoint: "/b", batch: 0 })).items.length, 1);
  const { items } = await worker.call("Dequeue", { endpoint: "/b", batch: 100 });
  assert.is(items.length, 10, "max_batch 10");
  const leases: string[] = items.map((item: { lease_id: string }) => item.lease_id);

  const acked = await worker.call("Ack", { endpoint: "/b", lease_ids: [...leases.slice(0, 4), "lease_unknown"] });
  assert.equal(acked, { acked: 4, conflicts: [{ lease_id: "lease_unknown", expired: false, reason: "lease_not_found" }] });
  failure(await worker.call("Ack", { endpoint: "/b", lease_ids: leases.slice(4, 10) }), INVALID_ARGUMENT, "invalid_body");

  const nacked = await worker.call("Nack", { endpoint: "/b", lease_ids: [leases[0], ...leases.slice(4, 8)] });
  assert.is(nacked.succeeded, 4);
  assert.equal(nacked.conflicts, [{ lease_id: leases[0], expired: false, reason: "lease_not_found" }], "an acked lease cannot be nacked");
  assert.equal(await worker.call("Nack", { endpoint: "/b", lease_ids: leases.slice(8, 10), dead: true }), { succeeded: 2, conflicts: [] });
});

test("Nack returns the message with attempt + 1; dead moves it to the DLQ with its reason", async () => {
  const id = await ingest("c");
  const first = (await worker.call("Dequeue", { endpoint: "/c" })).items[0];
  assert.equal(await worker.call("Nack", { endpoint: "/c", lease_id: first.lease_id, delay: { seconds: 0, nanos: 0 } }), { succeeded: 1, conflicts: [] });
  const again = (await worker.call("Dequeue", { endpoint: "/c" })).items[0];
  assert.equal([again.id, again.attempt], [id, 2]);
  assert.is.not(again.lease_id, first.lease_id);
  failure(await worker.call("Nack", { endpoint: "/c", lease_id: first.lease_id, dead: true }), FAILED_PRECONDITION, "lease_conflict");
  assert.equal(await worker.call("Nack", { endpoint: "/c", lease_id: again.lease_id, dead: true, reason: "bad payload", delay: { seconds: 60 } }), { succeeded: 1, conflicts: [] });
  const dlq = await call(`${u.admin}/dlq?route=/hooks/c`, { method: "GET", headers: { authorization: "Bearer admin-token" } });
  assert.is(dlq.status, 200, dlq.text);
  assert.equal(dlq.json.items.map((item: { id: string; dead_reason: string }) => [item.id, item.dead_reason]), [[id, "bad payload"]]);
});

test("Extend keeps a lease past its TTL; a lease left alone expires and its Ack is a conflict", async () => {
  await ingest("d", "kept");
  await ingest("d", "left");
  const { items } = await worker.call("Dequeue", { endpoint: "/d", batch: 2, lease_ttl: { seconds: 1 } });
  assert.is(items.length, 2);
  const [kept, left] = items;
  assert.equal(await worker.call("Extend", { endpoint: "/d", lease_id: kept.lease_id, extend_by: { seconds: 60 } }), {});
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  assert.equal(await worker.call("Ack", { endpoint: "/d", lease_id: kept.lease_id }), { acked: 1, conflicts: [] });
  const batch = await worker.call("Ack", { endpoint: "/d", lease_ids: [left.lease_id] });
  assert.is(batch.acked, 0);
  assert.is(batch.conflicts.length, 1);
  assert.ok(["lease_expired", "lease_not_found"].includes(batch.conflicts[0].reason));
  assert.is(batch.conflicts[0].expired, batch.conflicts[0].reason === "lease_expired");
  failure(await worker.call("Extend", { endpoint: "/d", lease_id: left.lease_id }), FAILED_PRECONDITION, "lease_conflict");
  failure(await worker.call("Extend", { endpoint: "/d" }), INVALID_ARGUMENT, "invalid_body");
  // The expired message is ready again, for any worker, with attempt + 1.
  const redelivered = (await worker.call("Dequeue", { endpoint: "/d" })).items[0];
  assert.equal([redelivered.payload.toString(), redelivered.attempt], ["left", 2]);
});

test("a long poll wakes when ingress queues a message", async () => {
  let posted = false;
  const polling = worker.call("Dequeue", { endpoint: "/poll", max_wait: { seconds: 20 } }).then((reply) => ({ reply, posted }));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const id = await ingest("poll", "wake");
  posted = true;
  const { reply, posted: postedFirst } = await polling;
  assert.ok(postedFirst, "the poll waited for the message");
  assert.equal(reply.items.map((item: { id: string }) => item.id), [id]);
});

test("a cancelled Dequeue leases nothing: the next message goes to the next worker with attempt 1", async () => {
  const abort = new AbortController();
  const polling = worker.call("Dequeue", { endpoint: "/cancel", max_wait: { seconds: 20 } }, { signal: abort.signal });
  await new Promise((resolve) => setTimeout(resolve, 200));
  abort.abort();
  failure(await polling, OK_CANCELLED);
  const timedOut = await worker.call("Dequeue", { endpoint: "/deadline", max_wait: { seconds: 20 } }, { deadlineMs: 300 });
  failure(timedOut, DEADLINE_EXCEEDED);
  // Let the server see both cancellations before the messages arrive.
  await new Promise((resolve) => setTimeout(resolve, 200));
  for (const endpoint of ["cancel", "deadline"]) {
    const id = await ingest(endpoint);
    const { items } = await worker.call("Dequeue", { endpoint: `/${endpoint}` });
    assert.equal(items.map((item: { id: string; attempt: number }) => [item.id, item.attempt]), [[id, 1]], endpoint);
  }
});

test("status codes: auth first from the authorization metadata, then endpoint, allowance and arguments", async () => {
  failure(await worker.call("Dequeue", { endpoint: "/a" }, { token: null }), UNAUTHENTICATED, "unauthorized");
  failure(await worker.call("Dequeue", { endpoint: "/a" }, { token: "wrong" }), UNAUTHENTICATED, "unauthorized");
  failure(await worker.call("Dequeue", { endpoint: "/a" }, { authorization: "Basic cHVsbC10b2tlbg==" }), UNAUTHENTICATED);
  failure(await worker.call("Dequeue", { endpoint: "" }, { token: "wrong" }), UNAUTHENTICATED, "unauthorized");
  assert.equal(await worker.call("Dequeue", { endpoint: "/a" }, { authorization: "bEaReR pull-token" }), { items: [] }, "the scheme is case-insensitive");

  // Route tokens replace the global list: each token is refused on the other's route.
  failure(await worker.call("Dequeue", { endpoint: "/scoped" }), PERMISSION_DENIED, "forbidden");
  failure(await worker.call("Ack", { endpoint: "/a", lease_id: "x" }, { token: "scoped-token" }), PERMISSION_DENIED, "forbidden");
  assert.equal(await worker.call("Dequeue", { endpoint: "/scoped" }, { token: "scoped-token" }), { items: [] });

  failure(await worker.call("Dequeue", { endpoint: "" }), INVALID_ARGUMENT, "invalid_body");
  failure(await worker.call("Dequeue", { endpoint: "/nope" }), NOT_FOUND, "not_found");
  failure(await worker.call("Ack", { endpoint: "/hooks/a", lease_id: "x" }), NOT_FOUND, "not_found");
  failure(await worker.call("Dequeue", { endpoint: "/a", max_wait: { seconds: -1 } }), INVALID_ARGUMENT, "invalid_body");
  failure(await worker.call("Dequeue", { endpoint: "/a", lease_ttl: { seconds: 1, nanos: -5 } }), INVALID_ARGUMENT, "invalid_body");
  failure(await worker.call("Nack", { endpoint: "/a", lease_id: "x", delay: { seconds: -3 } }), INVALID_ARGUMENT, "invalid_body");
  failure(await worker.call("Extend", { endpoint: "/a", lease_id: "x", extend_by: { seconds: -1 } }), INVALID_ARGUMENT, "invalid_body");
  failure(await worker.call("Ack", { endpoint: "/a", lease_id: "x", lease_ids: ["y"] }), INVALID_ARGUMENT, "invalid_body");
  failure(await worker.call("Ack", { endpoint: "/a" }), INVALID_ARGUMENT, "invalid_body");
  failure(await worker.call("Nack", { endpoint: "/a", lease_ids: ["1", "2", "3", "4", "5", "6"] }), INVALID_ARGUMENT, "invalid_body");
  const conflict = failure(await worker.call("Ack", { endpoint: "/a", lease_id: "lease_unknown" }), FAILED_PRECONDITION, "lease_conflict");
  assert.is(conflict.details, "1 lease is unknown or expired");
});

test("leases are scoped to their route: another endpoint's lease is a conflict", async () => {
  await ingest("scope");
  const { items } = await worker.call("Dequeue", { endpoint: "/scope" });
  failure(await worker.call("Ack", { endpoint: "/a", lease_id: items[0].lease_id }), FAILED_PRECONDITION, "lease_conflict");
  assert.equal(await worker.call("Ack", { endpoint: "/a", lease_ids: [items[0].lease_id] }), { acked: 0, conflicts: [{ lease_id: items[0].lease_id, expired: false, reason: "lease_not_found" }] });
  assert.equal(await worker.call("Ack", { endpoint: "/scope", lease_id: items[0].lease_id }), { acked: 1, conflicts: [] });
});

test("the Pull API metrics count gRPC calls as they count HTTP ones", async () => {
  await ingest("metrics");
  const { items } = await worker.call("Dequeue", { endpoint: "/metrics" });
  failure(await worker.call("Dequeue", { endpoint: "/metrics" }, { token: "scoped-token" }), PERMISSION_DENIED);
  failure(await worker.call("Dequeue", { endpoint: "/metrics", max_wait: { seconds: -1 } }), INVALID_ARGUMENT);
  await worker.call("Ack", { endpoint: "/metrics", lease_id: items[0].lease_id });
  failure(await worker.call("Ack", { endpoint: "/metrics", lease_id: "lease_unknown" }), FAILED_PRECONDITION);
  await pullCall(`${u.pull}/metrics`, "dequeue", "pull-token", {});
  const text = await (await fetch(u.metrics)).text();
  assert.match(text, /^spool_pull_dequeue_total\{route="\/hooks\/metrics",status="200"\} 2$/m, "one gRPC and one HTTP dequeue");
  assert.match(text, /^spool_pull_dequeue_total\{route="\/hooks\/metrics",status="4xx"\} 2$/m);
  assert.match(text, /^spool_pull_acked_total\{route="\/hooks\/metrics"\} 1$/m);
  assert.match(text, /^spool_pull_ack_conflict_total\{route="\/hooks\/metrics"\} 1$/m);
});

test("each call is one access log line: listener grpc, the method path and the status name", async () => {
  failure(await worker.call("Dequeue", { endpoint: "/access-log-probe" }), NOT_FOUND);
  const line = await eventually(() => proc.output().split("\n").find((l) => l.includes('"path":"/spool.worker.v1.WorkerService/Dequeue"') && l.includes('"status":"NOT_FOUND"')), 5_000, "the access log line");
  const entry = JSON.parse(line);
  assert.equal([entry.listener, entry.method, entry.remote], ["grpc", "POST", "127.0.0.1"]);
  assert.type(entry.duration_ms, "number");
  assert.ok(!("bytes_in" in entry));
  assert.ok(proc.output().split("\n").some((l) => l.includes('"listener":"grpc"') && l.includes('"path":"/spool.worker.v1.WorkerService/Ack"') && l.includes('"status":"OK"')));
});

test("a lease taken over gRPC is settled over HTTP, and the reverse", async () => {
  await ingest("mixed", "one");
  await ingest("mixed", "two");
  const overGrpc = (await worker.call("Dequeue", { endpoint: "/mixed" })).items[0];
  assert.is((await pullCall(`${u.pull}/mixed`, "ack", "pull-token", { lease_id: overGrpc.lease_id })).status, 204);
  const overHttp = (await pullCall(`${u.pull}/mixed`, "dequeue", "pull-token", {})).json.items[0];
  assert.equal(await worker.call("Ack", { endpoint: "/mixed", lease_id: overHttp.lease_id }), { acked: 1, conflicts: [] });
  assert.equal([overGrpc.payload.toString(), Buffer.from(overHttp.payload_b64, "base64").toString()], ["one", "two"]);
});

test.run();
