// Two `spool run` processes on one PostgreSQL database share a route: every message is delivered
// exactly once across both, and a long poll on one wakes for a message ingested by the other.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { call, pullCall } from "./helpers/http.js";
import { spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "./helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "./helpers/spoolfile.js";

const SUITE = "spool run: two instances on one PostgreSQL database";
const dsn = postgresTestDsn();

if (!dsn) {
  reportSkipped(SUITE, 2, "SPOOL_TEST_POSTGRES_DSN is not set");
  // uvu prints the summary block the runner reads only when a suite runs.
  suite(`${SUITE} (skipped)`).run();
} else {
  const temp = makeTempDir("e2e-pg");
  const schemas = new PgSchemas(dsn, "spool_e2e");
  const schema = schemas.next();
  const procs: SpoolProcess[] = [];
  const bases: ReturnType<typeof urls>[] = [];
  const test = suite(SUITE);

  test.before(async () => {
    for (const name of ["one", "two"]) {
      const ports = await freePorts();
      const config = writeSpoolfile(temp.path, spoolfileText(ports, "/hooks/a { queue postgres; pull { path /a } }"), `Spoolfile.${name}`);
      const proc = spawnSpool(["run", "--config", config, "--postgres-dsn", dsn], { env: { SPOOL_POSTGRES_SCHEMA: schema } });
      procs.push(proc);
      bases.push(urls(ports));
    }
    await Promise.all(procs.map((p, i) => waitHealthy(p, bases[i].admin)));
  });

  test.after(async () => {
    await Promise.all(procs.map((p) => stopSpool(p)));
    await schemas.dropAll();
    temp.cleanup();
  });

  test("messages ingested on both instances are delivered once across both", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const reply = await call(`${bases[i % 2].ingress}/hooks/a`, { body: `m${i}` });
      assert.is(reply.status, 202);
      ids.add(reply.json.ids[0]);
    }
    const seen = new Map<string, number>();
    await Promise.all(
      bases.map(async (base) => {
        for (;;) {
          const { items } = (await pullCall(`${base.pull}/a`, "dequeue", "pull-token", { batch: 16 })).json;
          if (items.length === 0) return;
          for (const item of items) seen.set(item.id, (seen.get(item.id) ?? 0) + 1);
          await pullCall(`${base.pull}/a`, "ack", "pull-token", { lease_ids: items.map((x: { lease_id: string }) => x.lease_id) });
        }
      }),
    );
    assert.is(seen.size, ids.size);
    for (const id of ids) assert.is(seen.get(id), 1, `${id} delivered once`);
  });

  test("a long poll on one instance wakes for a message ingested by the other", async () => {
    const waiting = pullCall(`${bases[0].pull}/a`, "dequeue", "pull-token", { max_wait: "10s" });
    await new Promise((r) => setTimeout(r, 200));
    const posted = await call(`${bases[1].ingress}/hooks/a`, { body: "cross" });
    const { items } = (await waiting).json;
    assert.is(items[0]?.id, posted.json.ids[0]);
  });

  test.run();
}
