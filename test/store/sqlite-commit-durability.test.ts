// Which SQLite commits wait for the fsync (the Store contract's durability note, README "Decisions"):
// a group made only of acks, nacks and attempt records commits with synchronous=NORMAL and is
// answered at once; any group holding an enqueue, a dequeue or an extend commits the same way but is
// answered only after its own fsync of the WAL, done off the event loop (wal-flush.ts), which is
// what synchronous=FULL would do inside COMMIT. Operator changes commit with synchronous=FULL, which
// is always back in force after a group, also after one that failed.
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/clock.js";
import type { StoreObserver } from "../../runtime/store/observer.js";
import { openStore } from "../../runtime/store/open.js";
import { SqliteConnection } from "../../runtime/store/sqlite/connection.js";
import { StoreError, type NewMessage, type Store } from "../../runtime/store/store.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { heldSync } from "../helpers/held-wal-sync.js";

const dir = makeTempDir("store-commit-durability");
process.on("exit", () => dir.cleanup());
let counter = 0;
const FULL = 2;
const NORMAL = 1;

type Commit = "durable" | "deferred";

function recorder(): { observer: StoreObserver; take: () => Commit[] } {
  let commits: Commit[] = [];
  return {
    observer: {
      operation() {},
      sqliteEvent(event, _seconds, durability) {
        if (event === "tx_commit") commits.push(durability ?? ("unreported" as Commit));
      },
    },
    take: () => {
      const taken = commits;
      commits = [];
      return taken;
    },
  };
}

function msg(id: string): NewMessage {
  return { id, route: "/r", target: "pull", payload: new Uint8Array([1]), headers: {} };
}

async function openRecorded(): Promise<{ store: Store; take: () => Commit[] }> {
  const { observer, take } = recorder();
  const store = await openStore({ backend: "sqlite", sqlitePath: join(dir.path, `s-${++counter}.db`) }, { clock: new TestClock(), observer });
  return { store, take };
}

const test = suite("sqlite commit durability");

test("acks, nacks and attempt records alone commit deferred; enqueue, dequeue, extend and repairs commit durable", async () => {
  const { store, take } = await openRecorded();
  await store.enqueue([msg("a"), msg("b"), msg("c"), msg("d")]);
  assert.equal(take(), ["durable"], "enqueue");
  const leased = await store.dequeue({ route: "/r", batch: 4, leaseTtlMs: 60_000 });
  assert.equal(take(), ["durable"], "dequeue");
  await store.extend([leased[0].leaseId], 120_000);
  assert.equal(take(), ["durable"], "extend");
  await store.ack([leased[0].leaseId]);
  assert.equal(take(), ["deferred"], "ack");
  await store.nack([leased[1].leaseId], { delayMs: 0 });
  assert.equal(take(), ["deferred"], "nack with delay");
  await store.nack([leased[2].leaseId], { dead: true, reason: "bad" });
  assert.equal(take(), ["deferred"], "nack dead");
  await store.recordAttempts([{ messageId: "a", route: "/r", target: "pull", attempt: 1, outcome: "acked", statusCode: 200 }]);
  assert.equal(take(), ["deferred"], "attempt record");
  await store.changeByIds("requeue", ["c"]);
  assert.equal(take(), ["durable"], "requeue from the DLQ");
  await store.close();
});

test("a group mixing deferred and durable writes commits durable", async () => {
  const { store, take } = await openRecorded();
  await store.enqueue([msg("a"), msg("b")]);
  const [leased] = [await store.dequeue({ route: "/r", batch: 2, leaseTtlMs: 60_000 })];
  take();
  await Promise.all([store.ack([leased[0].leaseId]), store.enqueue([msg("c")])]);
  assert.equal(take(), ["durable"], "ack + enqueue in one group");
  await Promise.all([store.ack([leased[1].leaseId]), store.dequeue({ route: "/r", batch: 1, leaseTtlMs: 60_000 })]);
  assert.equal(take(), ["durable"], "ack + dequeue in one group");
  await store.close();
});

test("groups run with synchronous=NORMAL, and FULL is in force again afterwards, also after a failed group", async () => {
  const { observer } = recorder();
  const conn = new SqliteConnection(join(dir.path, `c-${++counter}.db`), 1000, new TestClock(), observer);
  const synchronous = () => Number(conn.db.pragma("synchronous", { simple: true }));
  try {
    assert.is(synchronous(), FULL, "opened with FULL");
    assert.is(await conn.grouped(synchronous, "deferred"), NORMAL);
    assert.is(synchronous(), FULL, "restored after a deferred group");
    assert.is(await conn.grouped(synchronous, "durable"), NORMAL, "a durable group flushes the WAL itself, after COMMIT");
    assert.is(synchronous(), FULL, "restored after a durable group");

    // A deferred group whose COMMIT fails (a foreign key violation deferred to commit time).
    conn.db.exec("PRAGMA foreign_keys = ON; CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)");
    let failed = false;
    await conn.grouped(() => conn.db.exec("INSERT INTO child (p) VALUES (42)"), "deferred").catch(() => (failed = true));
    assert.ok(failed, "the group's commit failed");
    assert.is(synchronous(), FULL, "restored after a failed deferred group");
    assert.is(conn.db.inTransaction, false);
  } finally {
    await conn.close();
  }
});

const turn = () => new Promise((resolve) => setImmediate(resolve));

test("a durable group is answered only after its WAL fsync; a deferred group does not wait for one", async () => {
  const { observer, take } = recorder();
  const wal = heldSync();
  const conn = new SqliteConnection(join(dir.path, `c-${++counter}.db`), 1000, new TestClock(), observer, wal.sync);
  conn.db.exec("CREATE TABLE t (v INTEGER)");
  try {
    assert.is(await conn.grouped(() => conn.db.prepare("INSERT INTO t VALUES (1)").run().changes, "deferred"), 1);
    assert.is(wal.started(), 0, "a deferred group asks for no fsync");
    assert.equal(take(), ["deferred"]);

    let answered = false;
    const durable = conn.grouped(() => conn.db.prepare("INSERT INTO t VALUES (2)").run().changes, "durable").then((n) => ((answered = true), n));
    for (let i = 0; i < 5; i++) await turn();
    assert.is(wal.started(), 1, "the durable group asked for an fsync");
    assert.is(answered, false, "not answered while its fsync runs");
    assert.equal(take(), [], "the commit is reported once flushed");
    assert.is(conn.db.prepare("SELECT count(*) FROM t").pluck().get(), 2, "committed before the fsync: the event loop sees it");
    wal.finish();
    assert.is(await durable, 1);
    assert.is(answered, true);
    assert.equal(take(), ["durable"]);

    // One durable write makes the whole group durable: one fsync, which only the durable caller
    // waits for; the deferred one is answered at the commit, as alone.
    const settled: string[] = [];
    const mixed = Promise.all([
      conn.grouped(() => "deferred", "deferred").then((v) => (settled.push(v), v)),
      conn.grouped(() => "durable", "durable").then((v) => (settled.push(v), v)),
    ]);
    for (let i = 0; i < 5; i++) await turn();
    assert.is(wal.started(), 2, "one more fsync for the mixed group");
    assert.equal(settled, ["deferred"], "the durable caller is not answered before it");

    // While that fsync runs, a deferred write commits and is answered; durable writes gather and
    // commit together once it ends, then wait for an fsync of their own.
    const during: string[] = [];
    const durableDuring = [1, 2].map((n) => conn.grouped(() => conn.db.prepare("INSERT INTO t VALUES (?)").run(10 + n).changes, "durable").then((v) => (during.push(`durable ${n}`), v)));
    const deferredDuring = conn.grouped(() => conn.db.prepare("INSERT INTO t VALUES (3)").run().changes, "deferred").then((v) => (during.push("deferred"), v));
    for (let i = 0; i < 5; i++) await turn();
    assert.equal(during, ["deferred"]);
    assert.is(conn.db.prepare("SELECT count(*) FROM t WHERE v > 10").pluck().get(), 0, "the durable writes wait to commit until the fsync ends");
    assert.equal(take(), ["deferred"]);
    wal.finish();
    assert.equal(await mixed, ["deferred", "durable"]);
    for (let i = 0; i < 5; i++) await turn();
    assert.is(conn.db.prepare("SELECT count(*) FROM t WHERE v > 10").pluck().get(), 2, "committed together after it");
    assert.is(wal.started(), 3, "one fsync for both");
    assert.equal(during, ["deferred"]);
    wal.finish();
    assert.equal(await Promise.all([...durableDuring, deferredDuring]), [1, 1, 1]);
    assert.equal(during, ["deferred", "durable 1", "durable 2"]);
    assert.equal(take(), ["durable", "durable"]);
  } finally {
    await conn.close();
  }
});

test("closing waits for a durable group whose fsync is in flight, which is answered, not refused", async () => {
  const { observer } = recorder();
  const wal = heldSync();
  const conn = new SqliteConnection(join(dir.path, `c-${++counter}.db`), 1000, new TestClock(), observer, wal.sync);
  const durable = conn.grouped(() => "written", "durable");
  for (let i = 0; i < 5; i++) await turn();
  let closed = false;
  const closing = conn.close().then(() => (closed = true));
  for (let i = 0; i < 5; i++) await turn();
  assert.is(closed, false, "not closed while the fsync runs");
  wal.finish();
  assert.is(await durable, "written");
  await closing;
  assert.is(wal.started(), 1, "nothing left to flush");
  assert.is(closed, true);
});

test("a failed WAL fsync fails the durable group's callers with a store error", async () => {
  const { observer } = recorder();
  const wal = heldSync();
  const conn = new SqliteConnection(join(dir.path, `c-${++counter}.db`), 1000, new TestClock(), observer, wal.sync);
  try {
    const durable = conn.grouped(() => 1, "durable");
    for (let i = 0; i < 5; i++) await turn();
    wal.finish(Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" }));
    const error = await durable.then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.instance(error, StoreError);
    assert.is((error as StoreError).code, "unavailable");
    assert.match((error as StoreError).message, /flushing the WAL: EIO/);
    // The next durable group asks for a fresh fsync and succeeds.
    const next = conn.grouped(() => 2, "durable");
    for (let i = 0; i < 5; i++) await turn();
    wal.finish();
    assert.is(await next, 2);
  } finally {
    await conn.close();
  }
});

test.run();
