// The SQLite store's schema-2 hot paths: untargeted dequeue merges the route's targets in exact
// dequeue order, lease ids name their row by rowid but settle only the lease they were issued for,
// and no hot-path statement scans the messages table.
import Database from "better-sqlite3";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { applyMigration, SQLITE_MIGRATIONS } from "../../runtime/store/sqlite/migrations.js";
import { prepareStatements } from "../../runtime/store/sqlite/queries.js";
import type { NewMessage } from "../../runtime/store/records.js";
import type { Store } from "../../runtime/store/store.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { message } from "./contract.js";

const dir = makeTempDir("store-sqlite-leases");
process.on("exit", () => dir.cleanup());
const test = suite("sqlite leases and untargeted dequeue");
let counter = 0;

async function fresh(clock = new TestClock()): Promise<{ store: Store; clock: TestClock; path: string }> {
  const path = join(dir.path, `leases-${++counter}.db`);
  return { store: await openStore({ backend: "sqlite", sqlitePath: path }, { clock }), clock, path };
}

/** SQLite's order for TEXT is that of the UTF-8 bytes. */
function byDequeueOrder(a: NewMessage, b: NewMessage): number {
  return a.nextRunAtMs! - b.nextRunAtMs! || a.receivedAtMs! - b.receivedAtMs! || Buffer.compare(Buffer.from(a.id), Buffer.from(b.id));
}

test("untargeted dequeue drains several targets of a deep route in one (next_run_at, received_at, id) order", async () => {
  const { store, clock } = await fresh();
  const now = clock.now();
  const targets = ["alpha", "beta", "gamma", "delta"];
  const all: NewMessage[] = [];
  for (let i = 0; i < 6000; i++) {
    // Few distinct times, so many rows tie on both and the id decides across targets.
    const target = targets[(i * 7) % targets.length];
    all.push(message(`m${(i * 7919) % 6000}-${target}`, { target, nextRunAtMs: now - (i % 5) * 1000, receivedAtMs: now - 10_000 + (i % 3) }));
  }
  // JS orders these two by UTF-16 code unit (U+D83D < U+FF01), SQLite by UTF-8 byte (EF < F0).
  all.push(message("\u{1F600}", { target: "alpha", nextRunAtMs: now - 4000, receivedAtMs: now - 10_000 }));
  all.push(message("\uFF01", { target: "beta", nextRunAtMs: now - 4000, receivedAtMs: now - 10_000 }));
  // Another route and a target not yet due must not be taken.
  all.push(message("other-route", { route: "/other", nextRunAtMs: now - 9000, receivedAtMs: now - 20_000 }));
  const later = message("later", { target: "epsilon", nextRunAtMs: now + 60_000, receivedAtMs: now - 20_000 });
  for (let i = 0; i < all.length; i += 1000) await store.enqueue(all.slice(i, i + 1000));
  await store.enqueue([later]);

  const expected = all.filter((m) => m.route === "/orders").sort(byDequeueOrder).map((m) => m.id);
  assert.ok(expected.indexOf("\uFF01") < expected.indexOf("\u{1F600}"), "the fixture exercises byte order");
  const targetOf = new Map(all.map((m) => [m.id, m.target]));
  const drained: string[] = [];
  for (;;) {
    const leased = await store.dequeue({ route: "/orders", batch: 37, leaseTtlMs: 60_000 });
    if (leased.length === 0) break;
    assert.ok(leased.every((m) => m.route === "/orders" && m.target === targetOf.get(m.id)));
    drained.push(...leased.map((m) => m.id));
    assert.equal((await store.ack(leased.map((m) => m.leaseId))).conflicts, []);
  }
  assert.equal(drained, expected);
  clock.advance(60_000);
  assert.equal((await store.dequeue({ route: "/orders", batch: 10, leaseTtlMs: 1000 })).map((m) => m.id), ["later"]);
  await store.close();
});

test("a stale lease id of a re-leased row settles nothing, and the current lease still does", async () => {
  const { store, clock } = await fresh();
  await store.enqueue([message("a")]);
  const [first] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 1000 });
  clock.advance(2000);
  const [second] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 60_000 });
  assert.is(second.id, "a");
  assert.is(rowidOf(second.leaseId), rowidOf(first.leaseId), "same row, same rowid");
  for (const call of [() => store.ack([first.leaseId]), () => store.nack([first.leaseId], { dead: true }), () => store.extend([first.leaseId], 1000)]) {
    assert.equal((await call()).conflicts, [{ leaseId: first.leaseId, reason: "lease_not_found" }]);
  }
  assert.equal((await store.getMessages(["a"]))[0].state, "leased");
  assert.equal(await store.ack([second.leaseId]), { settled: [second.leaseId], conflicts: [] });
  await store.close();
});

test("a lease id whose rowid now belongs to a new message does not settle the new message's lease", async () => {
  const { store } = await fresh();
  await store.enqueue([message("old")]);
  const [old] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 60_000 });
  await store.ack([old.leaseId]);
  await store.enqueue([message("new")]);
  const [fresh_] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 60_000 });
  assert.is(rowidOf(fresh_.leaseId), rowidOf(old.leaseId), "SQLite reused the rowid of the deleted row");
  // Past the settled-lease memory the old id is simply unknown; it must not reach the new row.
  assert.equal((await store.nack([old.leaseId], { dead: true })).conflicts, [{ leaseId: old.leaseId, reason: "lease_not_found" }]);
  assert.equal((await store.getMessages(["new"]))[0].state, "leased");
  assert.equal((await store.ack([fresh_.leaseId])).settled, [fresh_.leaseId]);
  await store.close();
});

test("forged lease ids are lease_not_found and leave every lease in place", async () => {
  const { store } = await fresh();
  await store.enqueue([message("a"), message("b")]);
  const [a, b] = await store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: 60_000 });
  const random = (leaseId: string) => leaseId.slice(6, 22);
  const forged = [
    `lease_${"0".repeat(16)}_${rowidOf(a.leaseId)}`, // right rowid, wrong random part
    `lease_${random(a.leaseId)}_${rowidOf(b.leaseId)}`, // a's random part, b's rowid
    `${a.leaseId}0`, // another rowid
    `${a.leaseId} OR 1=1`,
    `lease_${random(a.leaseId)}`, // the v1 shape
    "lease__1",
    "lease_",
  ];
  for (const call of [() => store.ack(forged), () => store.nack(forged, { delayMs: 0 }), () => store.extend(forged, 1000)]) {
    const outcome = await call();
    assert.equal(outcome.settled, []);
    assert.equal(outcome.conflicts, forged.map((leaseId) => ({ leaseId, reason: "lease_not_found" })));
  }
  const views = await store.getMessages(["a", "b"]);
  assert.equal(views.map((v) => v.state), ["leased", "leased"]);
  assert.equal((await store.ack([a.leaseId, b.leaseId])).settled, [a.leaseId, b.leaseId]);
  await store.close();
});

test("no hot-path statement scans the messages table", () => {
  const db = new Database(":memory:");
  for (const migration of SQLITE_MIGRATIONS) applyMigration(db, migration);
  const sql = prepareStatements(db);
  const hot = ["expireLeases", "readyTargets", "readyKeys", "readyRowids", "leaseByRowid", "leasedRows", "lookupLeases", "ackDelete", "deliverByIds", "requeueLeased", "killLeased", "extendLeases"] as const;
  for (const name of hot) {
    const statement = sql[name];
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${statement.source}`);
    const named = /@route/.test(statement.source);
    const rows = (named ? plan.all({ route: "/r", target: "t", now: 0, batch: 1 }) : plan.all(...Array(countParams(statement.source)).fill(null))) as { detail: string }[];
    const details = rows.map((row) => row.detail);
    assert.ok(details.some((d) => /^SEARCH messages USING/.test(d)), `${name} searches messages: ${details.join("; ")}`);
    assert.not.ok(details.some((d) => /^SCAN messages\b/.test(d)), `${name} does not scan messages: ${details.join("; ")}`);
  }
  db.close();
});

function countParams(source: string): number {
  return (source.match(/\?/g) ?? []).length;
}

function rowidOf(leaseId: string): string {
  return leaseId.slice(leaseId.lastIndexOf("_") + 1);
}

test.run();
