// Two `spool run` processes on one PostgreSQL database serve the gRPC worker service: a Dequeue
// long poll on one wakes for a message ingested by the other (PostgreSQL NOTIFY), and a batch of
// leases taken on one is acked through the other. A binary payload and its headers reach a worker
// alike over gRPC and the HTTP Pull API (the store hands them over as base64 and stored JSON text).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { call, pullCall } from "../app/helpers/http.js";
import { freePort, spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "../app/helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "../app/helpers/spoolfile.js";
import { workerClient, type WorkerClient } from "./helpers/client.js";

const SUITE = "spool run: the gRPC worker service on PostgreSQL";
const dsn = postgresTestDsn();

if (!dsn) {
  reportSkipped(SUITE, 1, "SPOOL_TEST_POSTGRES_DSN is not set");
  suite(`${SUITE} (skipped)`).run();
} else {
  const temp = makeTempDir("grpc-pg");
  const schemas = new PgSchemas(dsn, "spool_grpc");
  const schema = schemas.next();
  const instances: { proc: SpoolProcess; ingress: string; pull: string; worker: WorkerClient }[] = [];
  const test = suite(SUITE);

  test.before(async () => {
    for (const name of ["one", "two"]) {
      const ports = await freePorts();
      const grpcPort = await freePort();
      const text = spoolfileText(ports, "/hooks/a { queue postgres; pull { path /a } }", { pullExtra: `; grpc_listen 127.0.0.1:${grpcPort}` });
      const proc = spawnSpool(["run", "--config", writeSpoolfile(temp.path, text, `Spoolfile.${name}`), "--postgres-dsn", dsn], { env: { SPOOL_POSTGRES_SCHEMA: schema } });
      instances.push({ proc, ingress: urls(ports).ingress, pull: urls(ports).pull, worker: workerClient(`127.0.0.1:${grpcPort}`, "pull-token") });
      await waitHealthy(proc, urls(ports).admin);
    }
  });

  test.after(async () => {
    for (const { proc, worker } of instances) {
      worker.close();
      assert.is((await stopSpool(proc)).code, 0, proc.output().slice(-2000));
    }
    await schemas.dropAll();
    temp.cleanup();
  });

  test("a long poll on one instance wakes for a message ingested on the other; leases settle on either", async () => {
    const [one, two] = instances;
    const waiting = one.worker.call("Dequeue", { endpoint: "/a", max_wait: { seconds: 10 } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const posted = await call(`${two.ingress}/hooks/a`, { body: "cross" });
    const { items } = await waiting;
    assert.equal(items.map((item: { id: string }) => item.id), posted.json.ids);

    for (let i = 0; i < 5; i++) await call(`${one.ingress}/hooks/a`, { body: `m${i}` });
    const batch = await two.worker.call("Dequeue", { endpoint: "/a", batch: 32 });
    assert.is(batch.items.length, 5);
    const leases = [items[0].lease_id, ...batch.items.map((item: { lease_id: string }) => item.lease_id)];
    assert.equal(await one.worker.call("Ack", { endpoint: "/a", lease_ids: leases }), { acked: 6, conflicts: [] });
    assert.equal((await two.worker.call("Dequeue", { endpoint: "/a" })).items, []);
  });

  test("a binary payload longer than a base64 line and its headers reach a worker alike over gRPC and HTTP", async () => {
    const [one, two] = instances;
    const payload = Buffer.from(Array.from({ length: 500 }, (_, i) => (i * 71 + 3) % 256));
    const headers = { "content-type": "application/octet-stream", "x-quote": 'say "hi" \\ ü', "x-a": "1" };
    for (let i = 0; i < 2; i++) assert.is((await call(`${one.ingress}/hooks/a`, { body: payload, headers })).status, 202);
    const overHttp = await pullCall(`${two.pull}/a`, "dequeue", "pull-token", { batch: 1 });
    assert.is(overHttp.status, 200, overHttp.text);
    const [item] = overHttp.json.items;
    assert.is(item.payload_b64, payload.toString("base64"));
    // Stored under their canonical names (docs/api.md "Ingress").
    const byLowerName = (stored: Record<string, string>) => Object.fromEntries(Object.entries(stored).map(([name, value]) => [name.toLowerCase(), value]));
    for (const [name, value] of Object.entries(headers)) assert.is(byLowerName(item.headers)[name], value, name);
    const overGrpc = await one.worker.call("Dequeue", { endpoint: "/a", batch: 1 });
    const [message] = overGrpc.items;
    assert.equal([...message.payload], [...payload]);
    for (const [name, value] of Object.entries(headers)) assert.is(byLowerName(message.headers)[name], value, name);
    assert.equal(message.headers, item.headers);
    assert.equal(await one.worker.call("Ack", { endpoint: "/a", lease_ids: [item.lease_id, message.lease_id] }), { acked: 2, conflicts: [] });
  });

  test.run();
}
