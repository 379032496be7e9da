// PostgreSQL schema upgrades on a database that already holds messages: schema 4 turns the captured
// headers from jsonb into json; what was stored before is still dequeued, and what is stored after
// keeps its header order. Schema 6 makes the lease id's unique index partial; a database written
// at schema 4 with messages in every state keeps them, and their leases still settle. Schema 7
// replaces the index over (state, received_at, id) by partial ones a lease never enters.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { systemClock, TestClock } from "../../runtime/time/clock.js";
import type { Store } from "../../runtime/store/store.js";
import { openStore } from "../../runtime/store/open.js";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";

const dsn = postgresTestDsn();
const test = suite("postgres: schema upgrades");

if (!dsn) {
  reportSkipped("postgres: schema upgrades", 3, "SPOOL_TEST_POSTGRES_DSN is not set");
} else {
  const schemas = new PgSchemas(dsn, "spool_migration");
  const open = (schema: string) => openStore({ backend: "postgres", postgresDsn: dsn, postgresSchema: schema, postgresPoolSize: 2 }, { clock: systemClock });

  test.after(() => schemas.dropAll());

  test("schema 3 → 5 with messages stored: they are dequeued after the upgrade, and new ones keep their header order", async () => {
    const schema = schemas.next();
    const headers = { "x-github-delivery": "1", host: "hooks.example", accept: "*/*" };
    const before = await open(schema);
    await before.enqueue([{ id: "stored-at-3", route: "/a", target: "pull", payload: new Uint8Array([1, 2, 3]), headers }]);
    await before.close();
    // Back to schema 3 as it was: headers in jsonb, versions 4 and 5 (runtime_secrets) not applied.
    const sql = schemas.admin;
    await sql.unsafe(`ALTER TABLE "${schema}".messages ALTER COLUMN headers TYPE jsonb USING headers::jsonb`);
    await sql.unsafe(`DROP TABLE "${schema}".runtime_secrets`);
    await sql.unsafe(`DELETE FROM "${schema}".schema_migrations WHERE version >= 4`);

    const after = await open(schema);
    try {
      const [{ data_type }] = await sql`SELECT data_type FROM information_schema.columns WHERE table_schema = ${schema} AND table_name = 'messages' AND column_name = 'headers'`;
      assert.is(data_type, "json");
      const [{ versions }] = await sql.unsafe(`SELECT array_agg(version ORDER BY version) AS versions FROM "${schema}".schema_migrations`);
      assert.equal(versions, [1, 2, 3, 4, 5, 6, 7]);
      assert.equal(await after.listRuntimeSecrets(), [], "migration 5 made runtime_secrets");
      await after.enqueue([{ id: "stored-at-4", route: "/a", target: "pull", payload: new Uint8Array([4]), headers, receivedAtMs: Date.now() + 1 }]);
      const leased = await after.dequeue({ route: "/a", batch: 10, leaseTtlMs: 30_000 });
      assert.equal(leased.map((m) => m.id), ["stored-at-3", "stored-at-4"]);
      assert.equal(leased[0].headers, headers, "the values stored under jsonb");
      assert.equal(Object.keys(leased[1].headers), Object.keys(headers), "stored under json: the order as sent");
    } finally {
      await after.close();
    }
  });

  test("schema 4 → 6 with a message in every state: each keeps its state, leases settle, lease ids stay unique", async () => {
    const schema = schemas.next();
    const clock = new TestClock();
    const openAt = (): Promise<Store> =>
      openStore(
        { backend: "postgres", postgresDsn: dsn, postgresSchema: schema, postgresPoolSize: 2, deliveredRetentionMs: 3_600_000 },
        { clock },
      );
    const body = (id: string, i: number) => ({ id, route: "/a", target: "pull", payload: new TextEncoder().encode(`body of ${id}`), headers: { "x-id": id }, receivedAtMs: clock.now() - 10 + i });
    const before = await openAt();
    const lease = async (count: number, ttlMs = 60_000) => (await before.dequeue({ route: "/a", batch: count, leaseTtlMs: ttlMs })).map((m) => m.leaseId);
    // In enqueue order, each taken by the next step: delivered, dead, expired (queued again, lease id kept), leased, canceled, queued.
    await before.enqueue(["delivered", "dead", "expired", "leased", "canceled", "queued"].map(body));
    const [deliveredLease] = await lease(1);
    await before.ack([deliveredLease]);
    const [deadLease] = await lease(1);
    await before.nack([deadLease], { dead: true, reason: "gave up" });
    const [expiredLease] = await lease(1, 10);
    const [leasedLease] = await lease(1);
    await before.changeByIds("cancel", ["canceled"]);
    clock.advance(20);
    await before.close();

    // Back to schema 4 as it was: the lease id's unique constraint over every row, versions 5
    // (runtime_secrets) and 6 not applied.
    const sql = schemas.admin;
    await sql.unsafe(`DROP TABLE "${schema}".runtime_secrets`);
    await sql.unsafe(`DROP INDEX "${schema}".messages_lease_id`);
    await sql.unsafe(`ALTER TABLE "${schema}".messages ADD CONSTRAINT messages_lease_id_key UNIQUE (lease_id)`);
    await sql.unsafe(`DELETE FROM "${schema}".schema_migrations WHERE version > 4`);

    const after = await openAt();
    try {
      const [{ versions }] = await sql.unsafe(`SELECT array_agg(version ORDER BY version) AS versions FROM "${schema}".schema_migrations`);
      assert.equal(versions, [1, 2, 3, 4, 5, 6, 7]);
      const indexes = await sql`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = ${schema} AND tablename = 'messages' AND indexdef LIKE '%(lease_id)%'`;
      assert.equal(indexes.map((row) => row.indexname), ["messages_lease_id"]);
      assert.match(indexes[0].indexdef, /UNIQUE INDEX .* WHERE \(lease_id IS NOT NULL\)/);

      const states = Object.fromEntries((await after.listMessages({ limit: 10 })).map((m) => [m.id, m.state]));
      assert.equal(states, { delivered: "delivered", dead: "dead", expired: "queued", leased: "leased", canceled: "canceled", queued: "queued" });
      // The lease that ran out is told so; the live one settles; the one acked before is a repeat.
      const outcome = await after.ack([expiredLease, leasedLease, deliveredLease]);
      assert.equal(outcome.settled, [leasedLease, deliveredLease]);
      assert.equal(outcome.repeated, [deliveredLease]);
      assert.equal(outcome.conflicts, [{ leaseId: expiredLease, reason: "lease_expired" }]);
      // The queued ones are leased again under new ids, and those ids still refuse a second holder.
      const again = await after.dequeue({ route: "/a", batch: 10, leaseTtlMs: 60_000 });
      assert.equal(again.map((m) => m.id).sort(), ["expired", "queued"]);
      const duplicate = await sql.unsafe(`UPDATE "${schema}".messages SET lease_id = $1 WHERE id = 'dead'`, [again[0].leaseId]).then(() => null, (error: Error) => error);
      assert.match(String(duplicate?.message), /duplicate key value violates unique constraint "messages_lease_id"/);
      assert.equal((await after.ack(again.map((m) => m.leaseId))).settled.length, 2);
      const settled = await after.getMessages(["delivered", "leased", "expired", "queued"]);
      assert.equal(settled.map((m) => `${m.id}:${m.state}`).sort(), ["delivered:delivered", "expired:delivered", "leased:delivered", "queued:delivered"]);
    } finally {
      await after.close();
    }
  });
  test("schema 6 → 7 with a message in every state: states, counts, lists and drop_oldest read the partial indexes", async () => {
    const schema = schemas.next();
    const clock = new TestClock();
    const openAt = (extra: { maxDepth?: number; dropOldest?: boolean } = {}): Promise<Store> =>
      openStore({ backend: "postgres", postgresDsn: dsn, postgresSchema: schema, postgresPoolSize: 2, deliveredRetentionMs: 3_600_000, ...extra }, { clock });
    const body = (id: string, i: number) => ({ id, route: "/a", target: "pull", payload: new TextEncoder().encode(id), headers: {}, receivedAtMs: clock.now() - 10 + i });
    const before = await openAt();
    const lease = async (count: number) => (await before.dequeue({ route: "/a", batch: count, leaseTtlMs: 60_000 })).map((m) => m.leaseId);
    await before.enqueue(["delivered", "dead", "leased", "canceled", "queued-1", "queued-2"].map(body));
    await before.ack(await lease(1));
    await before.nack(await lease(1), { dead: true, reason: "gave up" });
    const [leasedLease] = await lease(1);
    await before.changeByIds("cancel", ["canceled"]);
    await before.close();

    // Back to schema 6 as it was: one index over (state, received_at, id), version 7 not applied.
    const sql = schemas.admin;
    await sql.unsafe(`DROP INDEX "${schema}".messages_queued_received`);
    await sql.unsafe(`DROP INDEX "${schema}".messages_settled_received`);
    await sql.unsafe(`CREATE INDEX messages_state_received ON "${schema}".messages (state, received_at, id)`);
    await sql.unsafe(`DELETE FROM "${schema}".schema_migrations WHERE version > 6`);

    const after = await openAt({ maxDepth: 4, dropOldest: true });
    try {
      const indexes = await sql`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = ${schema} AND tablename = 'messages' AND indexdef LIKE '%received_at, id%'`;
      assert.equal(Object.fromEntries(indexes.map((row) => [row.indexname, / WHERE (.*)$/.exec(row.indexdef)?.[1] ?? null])), {
        messages_received: null,
        messages_ready: "(state = 'queued'::text)",
        messages_ready_target: "(state = 'queued'::text)",
        messages_queued_received: "(state = 'queued'::text)",
        messages_settled_received: "(state = ANY (ARRAY['delivered'::text, 'dead'::text, 'canceled'::text]))",
      });
      const stats = await after.queueStats();
      assert.equal(stats.byState, { queued: 2, leased: 1, delivered: 1, dead: 1, canceled: 1 });
      for (const state of ["queued", "leased", "delivered", "dead", "canceled"] as const) {
        const listed = (await after.listMessages({ state, limit: 10 })).map((m) => m.id);
        assert.equal(listed, { queued: ["queued-2", "queued-1"], leased: ["leased"], delivered: ["delivered"], dead: ["dead"], canceled: ["canceled"] }[state], state);
      }
      // A lease writes no entry into either new index; a settle of the lease still works.
      assert.equal((await after.ack([leasedLease])).settled, [leasedLease]);
      // max_depth 4 with drop_oldest: two queued are active, so three more drop the oldest queued one.
      await after.enqueue(["new-1", "new-2", "new-3"].map((id, i) => body(id, 10 + i)));
      const queued = (await after.listMessages({ state: "queued", limit: 10 })).map((m) => m.id);
      assert.equal(queued, ["new-3", "new-2", "new-1", "queued-2"]);
    } finally {
      await after.close();
    }
  });
}

test.run();
