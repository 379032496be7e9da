// How dequeue and the settle statements find their rows on PostgreSQL (runtime/store/postgres/
// leases.ts, queries.ts). PostgreSQL keeps the index entries of leased and acked rows until VACUUM,
// so a drain must not walk them: while a backlog drains, dequeue scans from the first next_run_at of
// its last full batch, and what becomes ready below that floor is still found (an expired lease at
// once, anything else within a second, or as soon as the bounded scan comes back empty); ack, nack
// and extend find their leases by lease id alone, whatever the planner's statistics say.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { ACK_DELETE, EXTEND, NACK_DEAD, NACK_REQUEUE } from "../../runtime/store/postgres/queries.js";
import type { Store } from "../../runtime/store/store.js";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";
import { message } from "./contract.js";

const dsn = postgresTestDsn();
if (!dsn) {
  reportSkipped("postgres: lease scans", 6, "SPOOL_TEST_POSTGRES_DSN is not set");
  suite("postgres: lease scans (skipped)").run();
} else {
  const schemas = new PgSchemas(dsn, "spool_lease_scan");
  const admin = schemas.admin;
  const test = suite("postgres: lease scans");
  const T0 = 1_800_000_000_000;

  async function open(): Promise<{ store: Store; clock: TestClock; schema: string }> {
    const clock = new TestClock(T0);
    const schema = schemas.next();
    const store = await openStore({ backend: "postgres", postgresDsn: dsn!, postgresSchema: schema, postgresPoolSize: 2 }, { clock });
    return { store, clock, schema };
  }

  const ids = async (store: Store, batch: number, leaseTtlMs = 60_000): Promise<string[]> =>
    (await store.dequeue({ route: "/orders", batch, leaseTtlMs })).map((m) => m.id);

  test("a dequeue whose caller goes away while it waits its turn leases nothing", async () => {
    const { store, schema } = await open();
    try {
      await store.enqueue(["a", "b", "c"].map((id) => message(id)));
      // Hold the table so the first dequeue's statement waits; the second waits its turn behind it.
      const held = admin.reserve();
      const session = await held;
      await session`BEGIN`;
      await session.unsafe(`LOCK TABLE "${schema}".messages IN ACCESS EXCLUSIVE MODE`);
      const first = store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 60_000 });
      const gone = new AbortController();
      const second = store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: 60_000, maxWaitMs: 5_000 }, gone.signal);
      await new Promise((resolve) => setTimeout(resolve, 100));
      gone.abort();
      await session`COMMIT`;
      session.release();
      assert.equal((await first).map((m) => m.id), ["a"]);
      assert.equal(await second, []);
      assert.equal((await store.listMessages({ limit: 10 })).map((v) => [v.id, v.state]).sort(), [["a", "leased"], ["b", "queued"], ["c", "queued"]]);
    } finally {
      await store.close();
    }
  });

  test("a message stored below the floor of a draining backlog is leased within a second", async () => {
    const { store, clock } = await open();
    try {
      await store.enqueue(["a", "b", "c", "d", "e"].map((id) => message(id)));
      assert.equal(await ids(store, 2), ["a", "b"], "a full batch: later scans start at its next_run_at");
      // As another instance with a slower clock would store it.
      await store.enqueue([message("early", { receivedAtMs: T0 - 100, nextRunAtMs: T0 - 100 })]);
      clock.advance(10);
      assert.equal(await ids(store, 2), ["c", "d"], "the bounded scan does not see it yet");
      clock.advance(1000);
      assert.equal(await ids(store, 2), ["early", "e"], "the next full scan, a second on, leases it first");
    } finally {
      await store.close();
    }
  });

  test("a bounded scan that finds nothing scans from the start at once", async () => {
    const { store, clock } = await open();
    try {
      await store.enqueue([message("a"), message("b")]);
      assert.equal(await ids(store, 2), ["a", "b"]);
      await store.enqueue([message("early", { receivedAtMs: T0 - 100, nextRunAtMs: T0 - 100 })]);
      clock.advance(10);
      assert.equal(await ids(store, 2), ["early"]);
    } finally {
      await store.close();
    }
  });

  test("a lease that runs out below the floor is leased again by the dequeue whose sweep returns it", async () => {
    const { store, clock } = await open();
    try {
      await store.enqueue([message("a")]);
      assert.equal(await ids(store, 1, 10), ["a"], "leased until T0+10; the sweep ran at T0");
      await store.enqueue(["b", "c", "d", "e"].map((id) => message(id, { nextRunAtMs: T0 + 40 })));
      clock.advance(50);
      assert.equal(await ids(store, 2), ["b", "c"], "a full batch from next_run_at T0+40, no sweep yet");
      clock.advance(70);
      // The sweep (100 ms after the last) queues "a" again at its old lease_until, T0+10, below the floor.
      assert.equal(await ids(store, 2), ["a", "d"]);
    } finally {
      await store.close();
    }
  });

  test("ack, nack and extend find their leases by lease id alone, after thousands of settled leases", async () => {
    const { store, schema } = await open();
    try {
      for (let i = 0; i < 20; i++) await store.enqueue(Array.from({ length: 100 }, (_, j) => message(`m${i}_${j}`)));
      for (let i = 0; i < 19; i++) {
        const leased = await store.dequeue({ route: "/orders", batch: 100, leaseTtlMs: 60_000 });
        await store.ack(leased.map((m) => m.leaseId));
      }
      const leaseIds = (await store.dequeue({ route: "/orders", batch: 32, leaseTtlMs: 60_000 })).map((m) => m.leaseId);
      for (const [name, sql, extra] of [
        ["ack", ACK_DELETE, []],
        ["nack", NACK_REQUEUE, [T0]],
        ["nack dead", NACK_DEAD, [null]],
        ["extend", EXTEND, [T0 + 120_000]],
      ] as const) {
        // EXPLAIN without ANALYZE plans the statement and runs nothing: no lease is settled.
        const indexes = await admin.begin(async (tx) => {
          await tx.unsafe(`SET LOCAL search_path = "${schema}"`);
          // A table this small would be read whole; the question is which indexes the plan combines.
          await tx.unsafe("SET LOCAL enable_seqscan = off");
          const [row] = await tx.unsafe(`EXPLAIN (FORMAT JSON) ${sql.sql}`, [leaseIds, T0, null, ...extra] as never[]);
          const found = new Set<string>();
          const walk = (node: Record<string, unknown>): void => {
            if (typeof node["Index Name"] === "string") found.add(node["Index Name"]);
            for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
          };
          walk((row["QUERY PLAN"] as { Plan: Record<string, unknown> }[])[0].Plan);
          return [...found].sort();
        });
        assert.ok(indexes.includes("messages_lease_id"), `${name}: finds the leases by id (${indexes.join(", ")})`);
        for (const index of indexes) assert.ok(["messages_lease_id", "messages_pkey", "settled_leases_pkey"].includes(index), `${name} also scans ${index}`);
      }
    } finally {
      await store.close();
    }
  });

  test("a settle whose lease id settled_leases already holds is remembered by the upserting statement", async () => {
    const { store, schema } = await open();
    try {
      await store.enqueue(["a", "b", "c"].map((id) => message(id)));
      const leased = await store.dequeue({ route: "/orders", batch: 3, leaseTtlMs: 60_000 });
      const [first, second, third] = leased.map((m) => m.leaseId);
      // As if another lease had drawn the same random ids and been settled within the memory window.
      await admin.unsafe(`INSERT INTO "${schema}".settled_leases (lease_id, kind, settled_at, route) VALUES ($1, 'nack', $2, '/orders'), ($3, 'ack', $2, '/orders')`, [
        first,
        T0 - 1_000,
        third,
      ] as never[]);
      // The plain remembering INSERT fails on such an id (this is the case the fallback is for).
      const plain = await admin
        .begin(async (tx) => {
          await tx.unsafe(`SET LOCAL search_path = "${schema}"`);
          await tx.unsafe(ACK_DELETE.sql, [[first], T0, null] as never[]);
        })
        .then(
          () => null,
          (error: { code?: string; constraint_name?: string }) => `${error.code} ${error.constraint_name}`,
        );
      assert.is(plain, "23505 settled_leases_pkey");
      const acked = await store.ack([first, second]);
      assert.equal(acked, { settled: [first, second], conflicts: [] });
      const dead = await store.nack([third], { dead: true, reason: "bad" });
      assert.equal(dead, { settled: [third], conflicts: [] });
      const remembered = await admin.unsafe(`SELECT lease_id, kind FROM "${schema}".settled_leases ORDER BY kind, lease_id`);
      assert.equal(
        remembered.map((row) => [row.lease_id, row.kind]),
        [[first, "ack"], [second, "ack"], [third, "dead"]].sort((x, y) => (x[1] === y[1] ? (x[0] < y[0] ? -1 : 1) : x[1] < y[1] ? -1 : 1)),
      );
      // A repeat of either ack is still a success (the idempotent repeat of docs/decisions.md D19).
      assert.equal((await store.ack([first])).repeated, [first]);
      assert.equal((await store.listMessages({ limit: 10 })).map((v) => [v.id, v.state]), [["c", "dead"]]);
    } finally {
      await store.close();
    }
  });

  test.after(() => schemas.dropAll());
  test.run();
}
