// Migration 2 upgrades a schema-1 SQLite file in place: its indexes go, queued messages dequeue as
// before, and leases issued by the schema-1 code still ack, nack and extend (through lease_v1).
import Database from "better-sqlite3";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION } from "../../runtime/store/sqlite/migrations.js";
import { makeTempDir } from "../helpers/temp-dir.js";

const dir = makeTempDir("store-sqlite-migration");
process.on("exit", () => dir.cleanup());
const test = suite("sqlite migration 1 → 2");

/** A file as the schema-1 Spool left it: its migration, its insert and its lease UPDATE. */
function writeSchema1File(path: string, nowMs: number): Record<string, string> {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
  db.exec(SQLITE_MIGRATIONS[0].sql!);
  db.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (1, ?)").run(nowMs);
  const insert = db.prepare(
    `INSERT INTO messages (id, route, target, state, received_at, next_run_at, attempt, payload, headers, trace)
     VALUES (?, ?, ?, 'queued', ?, ?, 0, ?, ?, ?)`,
  );
  for (let i = 0; i < 10; i++) {
    insert.run(`m${i}`, "/orders", i % 3 === 0 ? "other" : "pull", nowMs - 1000 + i, nowMs - 1000 + i, Buffer.from(`body ${i}`), '{"x-n":"' + i + '"}', null);
  }
  const lease = db.prepare(
    `UPDATE messages SET state = 'leased', attempt = attempt + 1,
       lease_id = 'lease_' || lower(hex(randomblob(8))), lease_until = ?, next_run_at = ?
     WHERE id IN (SELECT value FROM json_each(?))
     RETURNING id, lease_id`,
  );
  const leases: Record<string, string> = {};
  for (const row of lease.all(nowMs + 60_000, nowMs + 60_000, JSON.stringify(["m1", "m2", "m3"])) as { id: string; lease_id: string }[]) leases[row.id] = row.lease_id;
  for (const row of lease.all(nowMs + 500, nowMs + 500, JSON.stringify(["m4"])) as { id: string; lease_id: string }[]) leases[row.id] = row.lease_id;
  db.close();
  return leases;
}

test("a schema-1 file upgrades in place; its queued rows dequeue in order and its leases still settle", async () => {
  const clock = new TestClock();
  const path = join(dir.path, "v1.db");
  const v1Leases = writeSchema1File(path, clock.now());
  assert.match(v1Leases.m1, /^lease_[0-9a-f]{16}$/);

  const store = await openStore({ backend: "sqlite", sqlitePath: path }, { clock });
  try {
    const db = new Database(path, { readonly: true });
    const indexes = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages'").pluck().all() as string[]).sort();
    assert.equal(indexes.filter((name) => name === "messages_ready" || name === "messages_lease"), []);
    assert.ok(indexes.includes("messages_ready_target"));
    assert.is(db.prepare("SELECT max(version) FROM schema_migrations").pluck().get(), SQLITE_SCHEMA_VERSION);
    assert.is(db.prepare("SELECT count(*) FROM lease_v1").pluck().get(), 4);
    assert.is(db.prepare("SELECT count(*) FROM runtime_secrets").pluck().get(), 0, "migration 5 made runtime_secrets");
    db.close();

    assert.equal(await store.ack([v1Leases.m1]), { settled: [v1Leases.m1], conflicts: [] });
    assert.equal(await store.nack([v1Leases.m2], { dead: true, reason: "poison" }), { settled: [v1Leases.m2], conflicts: [] });
    assert.equal(await store.extend([v1Leases.m3], 120_000), { settled: [v1Leases.m3], conflicts: [] });
    const forged = `lease_${"0".repeat(16)}`;
    assert.equal((await store.ack([forged])).conflicts, [{ leaseId: forged, reason: "lease_not_found" }]);
    clock.advance(1000);
    assert.equal((await store.ack([v1Leases.m4])).conflicts, [{ leaseId: v1Leases.m4, reason: "lease_expired" }]);

    const states = Object.fromEntries((await store.getMessages(["m1", "m2", "m3"])).map((v) => [v.id, v.state]));
    assert.equal(states, { m2: "dead", m3: "leased" });

    // m4's lease ran out, so it is queued again, due at its old lease_until; both targets merge.
    const leased = await store.dequeue({ route: "/orders", batch: 100, leaseTtlMs: 60_000 });
    assert.equal(leased.map((m) => m.id), ["m0", "m5", "m6", "m7", "m8", "m9", "m4"]);
    assert.equal(leased.map((m) => m.target), ["other", "pull", "other", "pull", "pull", "other", "pull"]);
    assert.equal(leased.find((m) => m.id === "m4")!.attempt, 2);
    assert.equal(Buffer.from(leased[0].payload).toString(), "body 0");
    assert.equal(leased[0].headers, { "x-n": "0" });
    assert.equal((await store.ack(leased.map((m) => m.leaseId))).conflicts, []);
    assert.equal(await store.ack([v1Leases.m3]), { settled: [v1Leases.m3], conflicts: [] });

    const { byState } = await store.queueStats();
    assert.equal([byState.queued, byState.leased, byState.dead], [0, 0, 1]);
    await store.prune();
    const after = new Database(path, { readonly: true });
    assert.is(after.prepare("SELECT count(*) FROM lease_v1").pluck().get(), 0, "prune drops entries that can no longer match");
    assert.is(after.prepare("SELECT active FROM queue_counters").pluck().get(), 0);
    after.close();
  } finally {
    await store.close();
  }
});

test.run();
