// Numbered SQLite migrations. Each runs once, in order, inside one transaction with the version
// bump; a database whose version is newer than the last entry here is refused (downgrade guard).
import type Database from "better-sqlite3";

export interface Migration {
  version: number;
  /** The migration's SQL, or null when it is a step SQL alone cannot take (see `apply`). */
  sql: string | null;
  /** Runs after `sql`, on the connection, inside the migration's transaction. */
  apply?: (db: Database.Database) => void;
}

/** Applies one migration (open-db.ts calls this inside the migration transaction). */
export function applyMigration(db: Database.Database, migration: Migration): void {
  if (migration.sql !== null) db.exec(migration.sql);
  migration.apply?.(db);
}

/**
 * Schema-1 CHECK constraints and equivalent forms SQLite evaluates by plain comparisons. A CHECK of
 * `x IN (…)` with more than two values is compiled into an ephemeral table that every execution of
 * an INSERT or a state-changing UPDATE builds again: for an ingress insert that was about 37% of the
 * instructions SQLite spent on the row (callgrind, 57k → 36k per row). The rewritten constraints
 * accept and refuse exactly the same values (a NULL passes both, as CHECK passes NULL).
 */
export const EQUIVALENT_CHECKS: readonly (readonly [table: string, schema1: string, equivalent: string])[] = [
  [
    "messages",
    "CHECK (state IN ('queued','leased','delivered','dead','canceled'))",
    "CHECK (state = 'queued' OR state = 'leased' OR state = 'delivered' OR state = 'dead' OR state = 'canceled')",
  ],
  ["attempts", "CHECK (outcome IN ('acked','retry','dead'))", "CHECK (outcome = 'acked' OR outcome = 'retry' OR outcome = 'dead')"],
];

/**
 * Swaps the CHECK texts in sqlite_schema, the procedure SQLite documents for schema changes that
 * leave the stored content untouched (https://sqlite.org/lang_altertable.html, "Making Other Kinds
 * Of Table Schema Changes"): no row is rewritten, so this is instant at any size. Bumping
 * schema_version makes other connections re-read the schema. A table whose text
 * differs from what schema 1 wrote is left as it is (correct, only slower).
 */
function rewriteInListChecks(db: Database.Database): void {
  const version = Number(db.pragma("schema_version", { simple: true }));
  // better-sqlite3 opens connections in SQLite's defensive mode, which forbids writable_schema.
  db.unsafeMode(true);
  try {
    db.pragma("writable_schema = ON");
    const rewrite = db.prepare("UPDATE sqlite_schema SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = ? AND instr(sql, ?) > 0");
    let changed = 0;
    for (const [table, schema1, equivalent] of EQUIVALENT_CHECKS) changed += rewrite.run(schema1, equivalent, table, schema1).changes;
    if (changed > 0) db.pragma(`schema_version = ${version + 1}`);
    // RESET: writable_schema off, and this connection parses the schema again now.
    db.pragma("writable_schema = RESET");
  } finally {
    db.unsafeMode(false);
  }
}

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE messages (
  id TEXT PRIMARY KEY,
  route TEXT NOT NULL,
  target TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued','leased','delivered','dead','canceled')),
  received_at INTEGER NOT NULL,
  -- queued: when it becomes ready; leased: lease_until; delivered/dead: when it got there.
  next_run_at INTEGER NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 0,
  lease_id TEXT,
  lease_until INTEGER,
  dead_reason TEXT,
  payload BLOB NOT NULL,
  headers TEXT NOT NULL,
  trace TEXT
);
-- Dequeue order (next_run_at, received_at, id) per route, and per route+target; partial so only
-- queued rows are indexed and the index stays small however large the DLQ grows.
CREATE INDEX messages_ready ON messages(route, next_run_at, received_at, id) WHERE state = 'queued';
CREATE INDEX messages_ready_target ON messages(route, target, next_run_at, received_at, id) WHERE state = 'queued';
CREATE UNIQUE INDEX messages_lease ON messages(lease_id) WHERE lease_id IS NOT NULL;
CREATE INDEX messages_lease_expiry ON messages(lease_until) WHERE state = 'leased';
-- Lists (newest first) and queue retention walk received_at. No index leads with state: state
-- changes on every dequeue and ack, and each such index would cost the hot path two more updates.
CREATE INDEX messages_received ON messages(received_at, id);
CREATE INDEX messages_dead_received ON messages(received_at, id) WHERE state = 'dead';
CREATE INDEX messages_settled ON messages(state, next_run_at) WHERE state IN ('delivered', 'dead');

-- Active depth (queued + leased) kept by triggers, so max_depth admission never counts rows.
CREATE TABLE queue_counters (id INTEGER PRIMARY KEY CHECK (id = 1), active INTEGER NOT NULL);
INSERT INTO queue_counters (id, active) VALUES (1, 0);
CREATE TRIGGER messages_active_insert AFTER INSERT ON messages WHEN new.state IN ('queued', 'leased')
BEGIN UPDATE queue_counters SET active = active + 1 WHERE id = 1; END;
CREATE TRIGGER messages_active_delete AFTER DELETE ON messages WHEN old.state IN ('queued', 'leased')
BEGIN UPDATE queue_counters SET active = active - 1 WHERE id = 1; END;
CREATE TRIGGER messages_active_update AFTER UPDATE OF state ON messages
WHEN (old.state IN ('queued', 'leased')) <> (new.state IN ('queued', 'leased'))
BEGIN UPDATE queue_counters SET active = active + (CASE WHEN new.state IN ('queued', 'leased') THEN 1 ELSE -1 END) WHERE id = 1; END;

CREATE TABLE attempts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  message_id TEXT NOT NULL,
  route TEXT NOT NULL,
  target TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status_code INTEGER,
  error TEXT,
  outcome TEXT NOT NULL CHECK (outcome IN ('acked','retry','dead')),
  dead_reason TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX attempts_created ON attempts(created_at, seq);
CREATE INDEX attempts_message ON attempts(message_id, created_at);
CREATE INDEX attempts_route ON attempts(route, target, created_at);

CREATE TABLE trend_samples (
  captured_at INTEGER NOT NULL,
  route TEXT NOT NULL,
  target TEXT NOT NULL,
  queued INTEGER NOT NULL,
  leased INTEGER NOT NULL,
  dead INTEGER NOT NULL
);
CREATE INDEX trend_samples_captured ON trend_samples(captured_at);
`,
  },
  {
    // Fewer b-trees on the hot paths. Enqueue and lease wrote messages_ready beside
    // messages_ready_target; untargeted dequeue now walks the targeted index one target at a time
    // (queries.ts readyTargets). Lease ids now carry the row's rowid, so ack/nack/extend find the
    // row by rowid and compare the stored lease_id: messages_lease is no longer needed. Leases
    // issued before this upgrade (`lease_` + 16 hex, no rowid) stay valid through lease_v1, which
    // names their rows; it is filled once here and only emptied (retention.ts).
    version: 2,
    sql: `
CREATE TABLE lease_v1 (lease_id TEXT PRIMARY KEY, message_rowid INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO lease_v1 (lease_id, message_rowid)
  SELECT lease_id, rowid FROM messages INDEXED BY messages_lease_expiry WHERE state = 'leased' AND lease_id IS NOT NULL;
DROP INDEX messages_ready;
DROP INDEX messages_lease;
`,
  },
  {
    // The state and outcome CHECKs as comparisons instead of IN-lists (EQUIVALENT_CHECKS).
    version: 3,
    sql: null,
    apply: rewriteInListChecks,
  },
  {
    // Enqueues add their messages to queue_counters.active once per group commit (connection.ts)
    // instead of through a trigger fired for every inserted row.
    version: 4,
    sql: "DROP TRIGGER messages_active_insert;",
  },
  {
    // Runtime secret versions (docs/secrets.md): AES-256-GCM sealed values, never plaintext.
    version: 5,
    sql: `
CREATE TABLE runtime_secrets (
  pool_name TEXT NOT NULL,
  id TEXT NOT NULL,
  sealed BLOB NOT NULL,
  not_before INTEGER NOT NULL,
  not_after INTEGER,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (pool_name, id)
);
`,
  },
];

export const SQLITE_SCHEMA_VERSION = SQLITE_MIGRATIONS[SQLITE_MIGRATIONS.length - 1].version;
