// Schema 3 states the messages.state and attempts.outcome CHECKs as comparisons, so no hot-path
// statement builds an ephemeral table per execution; the constraints still refuse what they did,
// and a schema-2 file upgrades in place with its rows untouched.
import Database from "better-sqlite3";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { applyMigration, EQUIVALENT_CHECKS, SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION } from "../../runtime/store/sqlite/migrations.js";
import { openSqliteDb } from "../../runtime/store/sqlite/open-db.js";
import { prepareStatements } from "../../runtime/store/sqlite/queries.js";
import { makeTempDir } from "../helpers/temp-dir.js";

const dir = makeTempDir("store-sqlite-checks");
process.on("exit", () => dir.cleanup());
const test = suite("sqlite CHECK constraints (schema 3)");

const tableSql = (db: Database.Database, name: string) => db.prepare("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?").pluck().get(name) as string;

function opcodes(db: Database.Database, source: string, params: unknown[]): string[] {
  return (db.prepare(`EXPLAIN ${source}`).all(...params) as { opcode: string }[]).map((row) => row.opcode);
}

/** How many ephemeral tables each statement's program opens, on a schema migrated up to `version`. */
function ephemeralTables(version: number, names: readonly (keyof ReturnType<typeof prepareStatements>)[]): number[] {
  const db = new Database(":memory:");
  try {
    for (const migration of SQLITE_MIGRATIONS.filter((m) => m.version <= version)) applyMigration(db, migration);
    const sql = prepareStatements(db);
    return names.map((name) => {
      const source = sql[name].source;
      return opcodes(db, source, Array((source.match(/\?/g) ?? []).length).fill(null)).filter((op) => op === "OpenEphemeral").length;
    });
  } finally {
    db.close();
  }
}

test("inserts and state changes no longer build an ephemeral table for the CHECK", () => {
  const inserts = ["insert", "insertAttempt"] as const;
  assert.equal(ephemeralTables(2, inserts), [1, 1], "schema 2 evaluates its IN-list CHECK through one");
  assert.equal(ephemeralTables(SQLITE_SCHEMA_VERSION, inserts), [0, 0]);
  // The UPDATEs keep the ones their `rowid IN (json_each)` lookups need.
  const updates = ["leaseByRowid", "expireLeases", "requeueLeased", "killLeased", "deliverByIds"] as const;
  assert.equal(
    ephemeralTables(SQLITE_SCHEMA_VERSION, updates),
    ephemeralTables(2, updates).map((n) => n - 1),
  );
});

test("a fresh file gets the rewritten constraint texts and statements without the ephemeral table", () => {
  const db = openSqliteDb(join(dir.path, "fresh.db"), 1000, Date.now());
  try {
    const sql = prepareStatements(db);
    const insert = opcodes(db, sql.insert.source, ["evt_1", "/r", "pull", 1, 1, Buffer.from("x"), "{}", null]);
    assert.ok(insert.includes("Insert"), "EXPLAIN shows the insert's program");
    assert.not.ok(insert.includes("OpenEphemeral"), `insert: ${insert.join(" ")}`);
    for (const [table, schema1, equivalent] of EQUIVALENT_CHECKS) {
      assert.not.ok(tableSql(db, table).includes(schema1), table);
      assert.ok(tableSql(db, table).includes(equivalent), table);
    }
  } finally {
    db.close();
  }
});

test("the rewritten CHECKs still refuse unknown states and outcomes", async () => {
  const path = join(dir.path, "refuse.db");
  const clock = new TestClock();
  const store = await openStore({ backend: "sqlite", sqlitePath: path }, { clock });
  await store.enqueue([{ id: "m1", route: "/r", target: "pull", payload: Buffer.from("x"), headers: {} }]);
  await store.close();
  const db = new Database(path);
  try {
    assert.throws(() => db.prepare("UPDATE messages SET state = 'bogus' WHERE id = 'm1'").run(), /CHECK constraint failed/);
    assert.throws(() => db.prepare("UPDATE messages SET state = 'Queued' WHERE id = 'm1'").run(), /CHECK constraint failed/);
    for (const state of ["leased", "delivered", "dead", "canceled", "queued"]) {
      assert.is(db.prepare("UPDATE messages SET state = ? WHERE id = 'm1'").run(state).changes, 1, state);
    }
    const attempt = db.prepare(
      "INSERT INTO attempts (id, message_id, route, target, attempt, outcome, created_at) VALUES (?, 'm1', '/r', 'pull', 1, ?, 0)",
    );
    assert.throws(() => attempt.run("att_bad", "ok"), /CHECK constraint failed/);
    for (const outcome of ["acked", "retry", "dead"]) assert.is(attempt.run(`att_${outcome}`, outcome).changes, 1, outcome);
  } finally {
    db.close();
  }
});

test("a schema-2 file upgrades in place: rows kept, constraints rewritten, file intact", async () => {
  const path = join(dir.path, "v2.db");
  const v2 = new Database(path);
  v2.pragma("journal_mode = WAL");
  v2.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
  for (const migration of SQLITE_MIGRATIONS.filter((m) => m.version <= 2)) {
    applyMigration(v2, migration);
    v2.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)").run(migration.version);
  }
  const insert = v2.prepare(
    `INSERT INTO messages (id, route, target, state, received_at, next_run_at, attempt, payload, headers, trace)
     VALUES (?, '/r', 'pull', 'queued', ?, ?, 0, ?, '{}', NULL)`,
  );
  for (let i = 0; i < 5; i++) insert.run(`m${i}`, i, i, Buffer.from(`body ${i}`));
  assert.ok(tableSql(v2, "messages").includes(EQUIVALENT_CHECKS[0][1]), "schema 2 still has the IN-list");
  v2.close();

  const clock = new TestClock();
  const store = await openStore({ backend: "sqlite", sqlitePath: path }, { clock });
  try {
    const leased = await store.dequeue({ route: "/r", batch: 10, leaseTtlMs: 60_000 });
    assert.equal(leased.map((m) => m.id), ["m0", "m1", "m2", "m3", "m4"]);
    assert.equal(Buffer.from(leased[4].payload).toString(), "body 4");
    await store.enqueue([{ id: "m5", route: "/r", target: "pull", payload: Buffer.from("new"), headers: {} }]);
    assert.equal((await store.ack(leased.map((m) => m.leaseId))).conflicts, []);
  } finally {
    await store.close();
  }
  const after = new Database(path, { readonly: true });
  try {
    assert.is(after.prepare("SELECT max(version) FROM schema_migrations").pluck().get(), SQLITE_SCHEMA_VERSION);
    assert.ok(tableSql(after, "messages").includes(EQUIVALENT_CHECKS[0][2]));
    assert.ok(tableSql(after, "attempts").includes(EQUIVALENT_CHECKS[1][2]));
    assert.is(after.pragma("integrity_check", { simple: true }), "ok");
    assert.equal(after.prepare("SELECT id, state FROM messages ORDER BY id").raw().all(), [["m5", "queued"]]);
    assert.is(after.prepare("SELECT active FROM queue_counters").pluck().get(), 1);
  } finally {
    after.close();
  }
});

test.run();
