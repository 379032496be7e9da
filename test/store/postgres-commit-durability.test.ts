// Which PostgreSQL commits wait for the WAL flush (the Store contract's durability note, README
// "Decisions"): acks, nacks and attempt records run on the store's deferred pool, whose sessions have
// synchronous_commit=off; enqueue, dequeue, extend and repairs run on the main pool, with the server's
// setting. The sessions are told apart by application_name, and what each ran by pg_stat_activity.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { deferredApplicationName, openDeferredPool } from "../../runtime/store/postgres/connect.js";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";
import { message } from "./contract.js";

const dsn = postgresTestDsn();
if (!dsn) {
  reportSkipped("postgres: commit durability", 2, "SPOOL_TEST_POSTGRES_DSN is not set");
  suite("postgres: commit durability (skipped)").run();
} else {
  const schemas = new PgSchemas(dsn, "spool_durability");
  const admin = schemas.admin;
  const test = suite("postgres: commit durability");

  test("the deferred pool's sessions run with synchronous_commit=off in the store's schema", async () => {
    const schema = schemas.next();
    const pool = openDeferredPool({ dsn, schema, poolSize: 4 });
    try {
      const [row] = await pool`SELECT current_setting('synchronous_commit') AS sync, current_setting('search_path') AS path, current_setting('application_name') AS app`;
      assert.equal(row, { sync: "off", path: schema, app: deferredApplicationName(schema) });
      const [server] = await admin`SELECT current_setting('synchronous_commit') AS sync`;
      assert.is.not(server.sync, "off", "the server default flushes (else this test proves nothing)");
    } finally {
      await pool.end({ timeout: 1 });
    }
  });

  test("acks, nacks and attempt records run on deferred sessions; enqueue, dequeue and extend do not", async () => {
    const schema = schemas.next();
    const store = await openStore({ backend: "postgres", postgresDsn: dsn, postgresSchema: schema, postgresPoolSize: 2 }, { clock: new TestClock() });
    const ranOn = async (fragment: string): Promise<string[]> =>
      (
        await admin`SELECT application_name FROM pg_stat_activity
                    WHERE application_name IN (${"spool:" + schema}, ${deferredApplicationName(schema)}) AND query ILIKE ${"%" + fragment + "%"}`
      ).map((r) => r.application_name as string);
    const main = "spool:" + schema;
    const deferred = deferredApplicationName(schema);
    try {
      const deferredSessions = async () => (await admin`SELECT 1 FROM pg_stat_activity WHERE application_name = ${deferred}`).length;
      await store.enqueue([message("a"), message("b"), message("c")]);
      const leased = await store.dequeue({ route: "/orders", batch: 3, leaseTtlMs: 60_000 });
      assert.is(leased.length, 3);
      await store.extend([leased[0].leaseId], 120_000);
      assert.equal(await ranOn("greatest(m.lease_until"), [main], "extend on the main pool");
      // The deferred pool connects on first use: enqueue, dequeue and extend never used it.
      assert.is(await deferredSessions(), 0, "no deferred session before the first ack");
      await store.ack([leased[0].leaseId]);
      assert.equal(await ranOn("DELETE FROM messages m USING unnest"), [deferred], "ack on a deferred session");
      await store.nack([leased[1].leaseId], { delayMs: 0 });
      assert.equal(await ranOn("SET state = 'queued', lease_id = NULL"), [deferred], "nack on a deferred session");
      await store.recordAttempts([{ messageId: "a", route: "/orders", target: "pull", attempt: 1, outcome: "acked", statusCode: 200 }]);
      assert.equal(await ranOn("INSERT INTO attempts"), [deferred], "attempt records on a deferred session");
      // Committed, and visible to every other session at once.
      const [{ n }] = await admin.unsafe(`SELECT count(*)::int AS n FROM "${schema}".messages WHERE id = 'a'`);
      assert.is(n, 0);
      assert.is((await store.listAttempts({ messageId: "a", limit: 5 })).length, 1);
    } finally {
      await store.close();
    }
  });

  test.after(() => schemas.dropAll());
  test.run();
}
