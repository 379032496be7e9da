// Which SQLite commits wait for the fsync (the Store contract's durability note, docs/decisions.md D41):
// a group made only of acks, nacks and attempt records commits with synchronous=NORMAL; any group
// holding an enqueue, a dequeue or an extend commits with synchronous=FULL, so SQLite fsyncs the WAL
// inside COMMIT, before any of its callers is answered. Operator changes commit with
// synchronous=FULL, which is always back in force after a group, also after one that failed.
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import type { StoreObserver } from "../../runtime/store/observer.js";
import { openStore } from "../../runtime/store/open.js";
import { SqliteConnection } from "../../runtime/store/sqlite/connection.js";
import type { NewMessage } from "../../runtime/store/records.js";
import { StoreError, type Store } from "../../runtime/store/store.js";
import { makeTempDir } from "../helpers/temp-dir.js";

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
      dropped() {},
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

test("deferred groups commit with synchronous=NORMAL, durable and mixed groups with FULL, and FULL is in force again afterwards, also after a failed group", async () => {
  const { observer, take } = recorder();
  const conn = new SqliteConnection(join(dir.path, `c-${++counter}.db`), 1000, new TestClock(), observer);
  const synchronous = () => Number(conn.db.pragma("synchronous", { simple: true }));
  try {
    assert.is(synchronous(), FULL, "opened with FULL");
    assert.is(await conn.grouped(synchronous, "deferred"), NORMAL, "a deferred group leaves the fsync to the next durable commit");
    assert.is(synchronous(), FULL, "restored after a deferred group");
    assert.is(await conn.grouped(synchronous, "durable"), FULL, "a durable group fsyncs the WAL inside COMMIT");
    assert.is(synchronous(), FULL, "still FULL after a durable group");
    assert.equal(take(), ["deferred", "durable"]);

    // One durable write makes the whole group durable: its deferred neighbour commits with FULL too.
    const mixed = await Promise.all([conn.grouped(synchronous, "deferred"), conn.grouped(synchronous, "durable")]);
    assert.equal(mixed, [FULL, FULL], "one group, committed with FULL");
    assert.equal(take(), ["durable"]);

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

test("closing lets the groups already submitted commit and answers them", async () => {
  const { observer } = recorder();
  const conn = new SqliteConnection(join(dir.path, `c-${++counter}.db`), 1000, new TestClock(), observer);
  conn.db.exec("CREATE TABLE t (v INTEGER)");
  const writes = [1, 2, 3].map((v) => conn.grouped(() => conn.db.prepare("INSERT INTO t VALUES (?)").run(v).changes, v === 2 ? "deferred" : "durable"));
  await conn.close();
  assert.equal(await Promise.all(writes), [1, 1, 1]);
  let refused: unknown;
  await conn.grouped(() => 1).catch((error: unknown) => (refused = error));
  assert.instance(refused, StoreError);
  assert.is((refused as StoreError).code, "closed");
});

test.run();
