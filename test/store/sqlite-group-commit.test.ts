// Group commit on SQLite (docs/decisions.md D40): writes submitted in the same moment share one
// transaction and one fsync, one caller's refusal never fails its neighbours, and nobody is answered
// before the commit holding their work. Commits are counted through the store observer.
import Database from "better-sqlite3";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import type { SqliteEvent, StoreObserver } from "../../runtime/store/observer.js";
import { openStore } from "../../runtime/store/open.js";
import type { NewMessage } from "../../runtime/store/records.js";
import { StoreError, type Store } from "../../runtime/store/store.js";
import { makeTempDir } from "../helpers/temp-dir.js";

const dir = makeTempDir("store-group-commit");
process.on("exit", () => dir.cleanup());
let counter = 0;

interface Counted {
  store: Store;
  commits: () => number;
  path: string;
}

async function open(options: { maxDepth?: number } = {}): Promise<Counted> {
  let commits = 0;
  const observer: StoreObserver = {
    operation() {},
    sqliteEvent(event: SqliteEvent) {
      if (event === "tx_commit") commits++;
    },
    dropped() {},
  };
  const path = join(dir.path, `group-${++counter}.db`);
  const store = await openStore({ backend: "sqlite", sqlitePath: path, ...options }, { clock: new TestClock(), observer });
  return { store, commits: () => commits, path };
}

function msg(id: string, route = "/r"): NewMessage {
  return { id, route, target: "pull", payload: new Uint8Array([1, 2, 3]), headers: {} };
}

const test = suite("sqlite group commit");

/** queue_counters.active, what max_depth admission reads, and the rows it should count, from a second connection. */
function activeCounter(path: string): number {
  const reader = new Database(path, { readonly: true });
  try {
    const counted = reader.prepare("SELECT active FROM queue_counters").pluck().get() as number;
    const rows = reader.prepare("SELECT count(*) FROM messages WHERE state IN ('queued', 'leased')").pluck().get() as number;
    assert.equal(counted, rows, "queue_counters.active equals the queued and leased rows");
    return counted;
  } finally {
    reader.close();
  }
}

test("fifty concurrent single-message enqueues share one commit", async () => {
  const { store, commits } = await open();
  const before = commits();
  await Promise.all(Array.from({ length: 50 }, (_, i) => store.enqueue([msg(`m${i}`)])));
  assert.equal(commits() - before, 1);
  assert.equal((await store.queueStats()).byState.queued, 50);
  await store.close();
});

test("concurrent dequeues, acks, nacks and attempt records of four consumers share one commit per round", async () => {
  const { store, commits } = await open();
  await store.enqueue(Array.from({ length: 8 }, (_, i) => msg(`m${i}`)));
  let before = commits();
  const leased = await Promise.all(Array.from({ length: 4 }, () => store.dequeue({ route: "/r", batch: 2, leaseTtlMs: 60_000 })));
  assert.equal(commits() - before, 1, "four dequeues in one commit");
  const ids = leased.flat().map((m) => m.id);
  assert.equal(new Set(ids).size, 8, "no message leased twice within one group");

  before = commits();
  const [ack1, ack2, nack, extend, recorded] = await Promise.all([
    store.ack([leased[0][0].leaseId, leased[0][1].leaseId]),
    store.ack([leased[1][0].leaseId, "lease_unknown"]),
    store.nack([leased[2][0].leaseId], { dead: true, reason: "bad" }),
    store.extend([leased[3][0].leaseId], 120_000),
    store.recordAttempts([{ messageId: leased[0][0].id, route: "/r", target: "pull", attempt: 1, outcome: "acked", statusCode: 200 }]),
  ]);
  assert.equal(commits() - before, 1, "acks, nack, extend and attempts in one commit");
  assert.equal(ack1.settled.length, 2);
  assert.equal(ack2.settled, [leased[1][0].leaseId]);
  assert.equal(ack2.conflicts, [{ leaseId: "lease_unknown", reason: "lease_not_found" }]);
  assert.equal(nack.settled, [leased[2][0].leaseId]);
  assert.equal(extend.settled, [leased[3][0].leaseId]);
  assert.equal(recorded, undefined);
  const stats = await store.queueStats();
  assert.equal(stats.byState.dead, 1);
  assert.equal(stats.byState.leased, 8 - 3 - 1);
  assert.equal((await store.listAttempts({ messageId: leased[0][0].id, limit: 10 })).length, 1);
  await store.close();
});

test("a refused caller in a group fails alone: its rows are undone, its neighbours' are committed", async () => {
  const { store, commits, path } = await open({ maxDepth: 4 });
  await store.enqueue([msg("existing")]);
  const before = commits();
  const results = await Promise.allSettled([
    store.enqueue([msg("a")]),
    store.enqueue([msg("b"), msg("existing")]), // duplicate id: refused, "b" must not stay
    // After the duplicate's rows are undone the depth is 2 (existing, a): three more exceed max_depth 4.
    store.enqueue([msg("c"), msg("d"), msg("e")]),
    store.dequeue({ route: "/r", batch: 1, leaseTtlMs: 60_000 }),
  ]);
  assert.equal(commits() - before, 1);
  assert.equal(results[0].status, "fulfilled");
  assert.equal(results[1].status, "rejected");
  assert.equal(((results[1] as PromiseRejectedResult).reason as StoreError).code, "duplicate_id");
  assert.equal(results[2].status, "rejected");
  assert.equal(((results[2] as PromiseRejectedResult).reason as StoreError).code, "queue_full");
  assert.equal(results[3].status, "fulfilled");
  const all = await store.listMessages({ limit: 100 });
  assert.equal(all.map((m) => m.id).sort(), ["a", "existing"]);
  assert.equal(activeCounter(path), 2, "b, undone with its savepoint, is not counted");
  await store.close();
});

test("single-message enqueues refused in a group fail alone, leave nothing behind, and the group commits once", async () => {
  const { store, commits, path } = await open({ maxDepth: 4 });
  await store.enqueue([msg("existing")]);
  const before = commits();
  const results = await Promise.allSettled([
    store.enqueue([msg("a")]),
    store.enqueue([msg("existing")]), // duplicate id: that INSERT fails and is undone by itself
    store.enqueue([msg("b")]),
    store.enqueue([msg("a")]), // duplicate of a row written earlier in the same transaction
    store.enqueue([msg("c")]), // depth 3 + 1: fits only because the refused rows left nothing
    store.enqueue([msg("d")]), // depth 4 + 1 > max_depth 4: queue_full before any write
    store.dequeue({ route: "/r", batch: 1, leaseTtlMs: 60_000 }),
  ]);
  assert.equal(commits() - before, 1);
  const codes = results.map((r) => (r.status === "rejected" ? (r.reason as StoreError).code : null));
  assert.equal(codes, [null, "duplicate_id", null, "duplicate_id", null, "queue_full", null]);
  const all = await store.listMessages({ limit: 100 });
  assert.equal(all.map((m) => m.id).sort(), ["a", "b", "c", "existing"]);
  const { byState } = await store.queueStats();
  assert.equal([byState.queued, byState.leased], [3, 1]);
  assert.equal(activeCounter(path), 4, "max_depth's counter counts only the rows that stayed");
  await store.close();
});

test("the active counter follows enqueues (counted once per group, no insert trigger), acks, nacks and refusals", async () => {
  const { store, path } = await open({ maxDepth: 1000 });
  const db = new Database(path, { readonly: true });
  assert.equal(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' ORDER BY name").pluck().all(), ["messages_active_delete", "messages_active_update"]);
  db.close();
  let n = 0;
  for (let round = 0; round < 3; round++) {
    await Promise.allSettled([
      ...Array.from({ length: 10 }, () => store.enqueue([msg(`s${n++}`)])),
      store.enqueue([msg(`b${n++}`), msg(`b${n++}`), msg(`b${n++}`)]),
      store.enqueue([msg("s0")]), // a duplicate (of a row of this group in round 1): refused, not counted
    ]);
    assert.equal(activeCounter(path), 13 * (round + 1));
  }
  const leased = await store.dequeue({ route: "/r", batch: 10, leaseTtlMs: 60_000 });
  await Promise.all([store.ack(leased.slice(0, 4).map((m) => m.leaseId)), store.nack(leased.slice(4, 6).map((m) => m.leaseId), { dead: true, reason: "x" }), store.enqueue([msg("late")])]);
  assert.equal(activeCounter(path), 39 - 6 + 1);
  await store.close();
});

test("max_depth inside a group sees the room an ack earlier in the same group made", async () => {
  const { store, commits, path } = await open({ maxDepth: 3 });
  await store.enqueue([msg("x"), msg("y")]);
  const [leased] = await store.dequeue({ route: "/r", batch: 1, leaseTtlMs: 60_000 });
  const before = commits();
  const results = await Promise.allSettled([
    store.enqueue([msg("a")]), // depth 2 + 1 = 3: fits
    store.enqueue([msg("b")]), // 3 + 1: queue_full
    store.ack([leased.leaseId]), // depth 2
    store.enqueue([msg("c")]), // 2 + 1: fits only if the ack's change is seen
    store.enqueue([msg("d")]), // 3 + 1: queue_full
  ]);
  assert.equal(commits() - before, 1);
  const codes = results.map((r) => (r.status === "rejected" ? (r.reason as StoreError).code : null));
  assert.equal(codes, [null, "queue_full", null, null, "queue_full"]);
  assert.equal(activeCounter(path), 3);
  await store.close();
});

test("enqueue refusals before the group (closed store, invalid batch) are rejections, not synchronous throws", async () => {
  const { store } = await open();
  const invalid = store.enqueue([{ ...msg("x"), route: "no-slash" }]);
  assert.instance(invalid, Promise);
  assert.equal(((await invalid.catch((e: unknown) => e)) as StoreError).code, "invalid_argument");
  const twice = store.enqueue([msg("t"), msg("t")]);
  assert.equal(((await twice.catch((e: unknown) => e)) as StoreError).code, "duplicate_id");
  await store.close();
  const closed = store.enqueue([msg("late")]);
  assert.instance(closed, Promise);
  assert.equal(((await closed.catch((e: unknown) => e)) as StoreError).code, "closed");
});

test("no caller is answered before the commit holding its work", async () => {
  const { store, path } = await open();
  // A second connection sees only committed data: when an enqueue resolves, its row must be visible there.
  const Database = (await import("better-sqlite3")).default;
  const reader = new Database(path, { readonly: true });
  const count = reader.prepare("SELECT count(*) FROM messages WHERE id = ?").pluck();
  await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      await store.enqueue([msg(`v${i}`)]);
      assert.equal(count.get(`v${i}`), 1, `v${i} visible to another connection when its enqueue resolved`);
    }),
  );
  const leased = await store.dequeue({ route: "/r", batch: 5, leaseTtlMs: 60_000 });
  const leasedState = reader.prepare("SELECT state FROM messages WHERE id = ?").pluck();
  for (const m of leased) assert.equal(leasedState.get(m.id), "leased");
  await store.ack(leased.map((m) => m.leaseId));
  for (const m of leased) assert.equal(count.get(m.id), 0, "acked row gone for another connection once ack resolved");
  reader.close();
  await store.close();
});

test.run();
