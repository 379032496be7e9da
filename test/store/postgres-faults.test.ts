// PostgreSQL sessions dying under a running store: the LISTEN session that carries wake-ups between
// instances comes back by itself (a long poll on one instance still wakes on another's enqueue), and
// after every session of the store is killed, the call that was in flight fails with a clear
// `unavailable` StoreError, nothing stored is lost or half-changed, and the same store serves again.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { deferredApplicationName } from "../../runtime/store/postgres/connect.js";
import { StoreError, type Store } from "../../runtime/store/store.js";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";
import { message } from "./contract.js";

const dsn = postgresTestDsn();
const test = suite("postgres: killed sessions");

/** How long a wake-up may take in real time; the TestClock keeps the 1 s fallback re-check from firing. */
const WAKE_BOUND_MS = 3000;

if (!dsn) {
  reportSkipped("postgres: killed sessions", 3, "SPOOL_TEST_POSTGRES_DSN is not set");
  suite("postgres: killed sessions (skipped)").run();
} else {
  const schemas = new PgSchemas(dsn, "spool_faults");
  // A TestClock everywhere: a long poll can then only wake through NOTIFY or a re-established LISTEN.
  const open = (schema: string) =>
    openStore({ backend: "postgres", postgresDsn: dsn, postgresSchema: schema, postgresPoolSize: 4 }, { clock: new TestClock() });
  const admin = schemas.admin;

  /** Pids of the store sessions of `schema` that LISTEN for wake-ups (one per open store). */
  const listenerPids = async (schema: string): Promise<number[]> =>
    (await admin`SELECT pid FROM pg_stat_activity WHERE application_name = ${"spool:" + schema} AND query ILIKE 'LISTEN %'`).map((r) => r.pid as number);

  const eventually = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const found = await probe();
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  const withinBound = <T>(promise: Promise<T>, what: string): Promise<T> =>
    Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${WAKE_BOUND_MS} ms`)), WAKE_BOUND_MS).unref())]);

  /** Opens A, then B, and returns A's listener pid (the only one before B opened). */
  const openPair = async (schema: string): Promise<{ a: Store; b: Store; aListener: number }> => {
    const a = await open(schema);
    const [aListener] = await listenerPids(schema);
    assert.ok(aListener, "instance A has a LISTEN session");
    return { a, b: await open(schema), aListener };
  };

  test("after its LISTEN session is killed, a long poll on instance A still wakes on instance B's enqueue", async () => {
    const schema = schemas.next();
    const { a, b, aListener } = await openPair(schema);
    try {
      const [bListener] = (await listenerPids(schema)).filter((pid) => pid !== aListener);
      await admin`SELECT pg_terminate_backend(${aListener}::int)`;
      const reListened = await eventually("A to LISTEN again", async () =>
        (await listenerPids(schema)).find((pid) => pid !== aListener && pid !== bListener),
      );
      assert.ok(reListened > 0);
      const polling = a.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 60_000, maxWaitMs: 60_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await b.enqueue([message("after-relisten")]);
      assert.equal((await withinBound(polling, "the wake-up")).map((m) => m.id), ["after-relisten"]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test("an enqueue on B while A's LISTEN session is down still reaches A's waiting long poll", async () => {
    const schema = schemas.next();
    const { a, b, aListener } = await openPair(schema);
    try {
      const polling = a.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 60_000, maxWaitMs: 60_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Its NOTIFY may go out before A listens again; coming back, A re-checks every waiting poll.
      await admin`SELECT pg_terminate_backend(${aListener}::int)`;
      await b.enqueue([message("during-outage")]);
      assert.equal((await withinBound(polling, "the wake-up")).map((m) => m.id), ["during-outage"]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  test("killing every session fails the call in flight with unavailable, keeps the data, and the store serves again", async () => {
    const schema = schemas.next();
    const { a, b } = await openPair(schema);
    let releaseRowLock = () => {};
    try {
      await a.enqueue([message("held"), message("leased"), message("untouched")]);
      const [leased] = await a.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 60_000 });
      assert.is(leased.id, "held");
      // Keep a call in flight: another session holds the row lock the cancel needs.
      const gate = new Promise<void>((resolve) => (releaseRowLock = resolve));
      let locked = () => {};
      const lockTaken = new Promise<void>((resolve) => (locked = resolve));
      const holder = admin.begin(async (tx) => {
        await tx.unsafe(`SELECT 1 FROM "${schema}".messages WHERE id = 'untouched' FOR UPDATE`);
        locked();
        await gate;
      });
      await lockTaken;
      const inFlight = a.changeByIds("cancel", ["untouched"]).then(
        () => assert.unreachable("the cancel finished although its session was killed"),
        (error: unknown) => error,
      );
      await eventually("the cancel to wait for the row lock", async () =>
        (await admin`SELECT 1 FROM pg_stat_activity WHERE application_name = ${"spool:" + schema} AND wait_event_type = 'Lock'`).length > 0 || undefined,
      );
      const killed = await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name IN (${"spool:" + schema}, ${deferredApplicationName(schema)})`;
      assert.ok(killed.length >= 4, `killed ${killed.length} sessions: both pools and both listeners`);
      const error = await inFlight;
      assert.instance(error, StoreError);
      assert.is((error as StoreError).code, "unavailable");
      assert.match((error as StoreError).message, /^cancel: lost the PostgreSQL connection \(.+\); the next call reconnects$/);
      releaseRowLock();
      await holder;

      // The next calls reconnect; a call that races a connection's close may still fail, the same way.
      const failures: string[] = [];
      const serving = async <T>(call: () => Promise<T>): Promise<T> => {
        for (let attempt = 0; ; attempt++) {
          try {
            return await call();
          } catch (error) {
            assert.instance(error, StoreError);
            failures.push((error as StoreError).code);
            if (attempt >= 8) throw error;
          }
        }
      };
      const views = await serving(() => a.getMessages(["held", "leased", "untouched"]));
      assert.equal(
        views.map((v) => [v.id, v.state]),
        [["held", "leased"], ["leased", "queued"], ["untouched", "queued"]],
      );
      assert.equal((await serving(() => a.ack([leased.leaseId]))).settled, [leased.leaseId]);
      await serving(() => a.enqueue([message("after-kill")]));
      // Wake-ups across instances work again too: both LISTEN sessions were among the killed.
      await eventually("both stores to LISTEN again", async () => ((await listenerPids(schema)).length === 2 ? true : undefined));
      const polling = serving(() => a.dequeue({ route: "/other", batch: 1, leaseTtlMs: 60_000, maxWaitMs: 60_000 }));
      await new Promise((resolve) => setTimeout(resolve, 100));
      await serving(() => b.enqueue([message("woken", { route: "/other" })]));
      assert.equal((await withinBound(polling, "the wake-up")).map((m) => m.id), ["woken"]);
      assert.ok(failures.every((code) => code === "unavailable"), `failures were ${failures.join(", ")}`);
    } finally {
      releaseRowLock();
      await Promise.all([a.close(), b.close()]);
    }
  });

  test.after(() => schemas.dropAll());
  test.run();
}
