// Several Spool instances on one PostgreSQL schema: competing consumers never hold the same message
// at once and every message is acked exactly once; a wake-up crosses instances through LISTEN/NOTIFY.
// Sessions killed under a running store: postgres-faults.test.ts.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { systemClock, TestClock } from "../../runtime/time/clock.js";
import { noopObserver } from "../../runtime/store/observer.js";
import { openStore } from "../../runtime/store/open.js";
import { openPostgresStore } from "../../runtime/store/postgres/store.js";
import type { Store } from "../../runtime/store/store.js";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";
import { message } from "./contract.js";

const dsn = postgresTestDsn();
const test = suite("postgres: several instances");
const TOTAL = 5000;

if (!dsn) {
  reportSkipped("postgres: several instances", 3, "SPOOL_TEST_POSTGRES_DSN is not set");
  suite("postgres: several instances (skipped)").run();
} else {
  const schemas = new PgSchemas(dsn, "spool_multi");
  const open = (schema: string, clock = systemClock) =>
    openStore({ backend: "postgres", postgresDsn: dsn, postgresSchema: schema, postgresPoolSize: 4 }, { clock });

  test("two instances and eight consumers drain 5000 messages, each acked exactly once, no overlapping leases", async () => {
    const schema = schemas.next();
    const stores = [await open(schema), await open(schema)];
    try {
      for (let i = 0; i < TOTAL; i += 500) {
        await stores[i % 2].enqueue(Array.from({ length: 500 }, (_, j) => message(`m-${i + j}`)));
      }
      const ackedTimes = new Map<string, number>();
      const holder = new Map<string, number>();
      let overlaps = 0;
      let redeliveries = 0;
      let conflicts = 0;
      const consumer = async (index: number, store: Store) => {
        let idle = 0;
        while (ackedTimes.size < TOTAL && idle < 50) {
          const leased = await store.dequeue({ route: "/orders", batch: 1 + ((index * 7) % 32), leaseTtlMs: 60_000 });
          if (leased.length === 0) {
            idle++;
            await new Promise((resolve) => setTimeout(resolve, 5));
            continue;
          }
          idle = 0;
          for (const m of leased) {
            if (holder.has(m.id)) overlaps++;
            holder.set(m.id, index);
            if (m.attempt > 1) redeliveries++;
          }
          // Every tenth batch is nacked once, so messages also move between consumers.
          const nackThis = leased[0].attempt === 1 && leased[0].id.endsWith("0");
          for (const m of leased) holder.delete(m.id);
          if (nackThis) {
            const outcome = await store.nack(leased.map((m) => m.leaseId), { delayMs: 0 });
            conflicts += outcome.conflicts.length;
            continue;
          }
          const outcome = await store.ack(leased.map((m) => m.leaseId));
          conflicts += outcome.conflicts.length;
          for (const m of leased) ackedTimes.set(m.id, (ackedTimes.get(m.id) ?? 0) + 1);
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, i) => consumer(i, stores[i % 2])));
      assert.is(overlaps, 0);
      assert.is(conflicts, 0);
      assert.is(ackedTimes.size, TOTAL);
      assert.ok([...ackedTimes.values()].every((n) => n === 1), "a message was acked more than once");
      assert.ok(redeliveries > 0, "the nacked batches came back");
      const stats = await stores[0].queueStats();
      assert.equal(stats.byState, { queued: 0, leased: 0, delivered: 0, dead: 0, canceled: 0 });
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  test("a long poll on one instance wakes on an enqueue through another", async () => {
    const schema = schemas.next();
    const clock = new TestClock();
    // With a TestClock the 1 s fallback re-check never fires, so only NOTIFY can wake the poll.
    const [waiting, writer] = [await open(schema, clock), await open(schema, clock)];
    try {
      const polling = waiting.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 60_000, maxWaitMs: 30_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await writer.enqueue([message("across")]);
      assert.equal((await polling).map((m) => m.id), ["across"]);
    } finally {
      await Promise.all([waiting.close(), writer.close()]);
    }
  });

  test("instances capturing trends on one schema record one sample per interval, not one each", async () => {
    const schema = schemas.next();
    const clock = new TestClock();
    const INTERVAL = 60_000;
    // Opened directly: openStore's maintenance would capture at start on its own timer.
    const instance = () =>
      openPostgresStore({ dsn: dsn!, schema, poolSize: 2, clock, observer: noopObserver, limits: {}, trendSampleIntervalMs: INTERVAL });
    const [a, b] = [await instance(), await instance()];
    try {
      await a.enqueue([message("sampled")]);
      const together = await Promise.all([a.captureTrendSample(), b.captureTrendSample(), a.captureTrendSample(), b.captureTrendSample()]);
      assert.is(together.reduce((sum, n) => sum + n, 0), 1, "four captures at once record one sample row");
      clock.advance(INTERVAL / 3);
      assert.is(await b.captureTrendSample(), 0, "a capture a third of an interval later records nothing");
      clock.advance(INTERVAL);
      assert.is(await b.captureTrendSample(), 1, "the next interval's capture records its sample");
      const captures = await schemas.admin.unsafe(`SELECT DISTINCT captured_at FROM "${schema}".trend_samples`);
      assert.is(captures.length, 2);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test.after(() => schemas.dropAll());
  test.run();
}
