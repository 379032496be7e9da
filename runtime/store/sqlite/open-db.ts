// Opens the SQLite file the way docs/decisions.md D40 and D48 require: WAL with synchronous=FULL (an
// ingress 202 survives power loss), verified after setting, a busy timeout for other processes
// (the MCP inspector), and the schema migrated or refused when it is newer than this build.
import Database from "better-sqlite3";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { StoreError } from "../store.js";
import { applyMigration, SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION } from "./migrations.js";

export type SqliteDb = Database.Database;

export function openSqliteDb(path: string, busyTimeoutMs: number, nowMs: number, readOnly = false): SqliteDb {
  if (readOnly) return openReadOnly(path, busyTimeoutMs);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  let db: SqliteDb;
  try {
    db = new Database(path);
  } catch (error) {
    throw sqliteStoreError(error, `cannot open SQLite database ${path}`);
  }
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    const journal = String(db.pragma("journal_mode = WAL", { simple: true })).toLowerCase();
    db.pragma("synchronous = FULL");
    const synchronous = Number(db.pragma("synchronous", { simple: true }));
    if (journal !== "wal" && path !== ":memory:") {
      throw new StoreError("unavailable", `SQLite database ${path} refused WAL mode (journal_mode is ${journal}); Spool requires WAL`);
    }
    if (synchronous !== 2) {
      throw new StoreError("unavailable", `SQLite database ${path} refused synchronous=FULL (got ${synchronous}); Spool requires it so accepted webhooks survive power loss`);
    }
    // A 64 MiB page cache keeps the ready and lease-expiry indexes of a deep backlog in memory, and a larger
    // auto-checkpoint lets pages rewritten by consecutive dequeues/acks be copied back once, not each time.
    db.pragma("cache_size = -65536");
    db.pragma("wal_autocheckpoint = 10000");
    // Savepoint (statement) journals in memory: a group write's journal spilled past 64 KiB to a
    // temp file otherwise, an open, unlink and pwrite per page on every lease group (drain +20–25%).
    db.pragma("temp_store = MEMORY");
    migrate(db, path, nowMs);
    return db;
  } catch (error) {
    db.close();
    throw sqliteStoreError(error, `cannot prepare SQLite database ${path}`);
  }
}

/**
 * A reader beside the process that owns the file (the MCP server's queue tools, docs/mcp.md): the
 * file must exist, nothing is written (no migration, no pragma that changes the file), and the schema
 * must be the one this build reads. WAL lets it read while `spool run` writes.
 */
function openReadOnly(path: string, busyTimeoutMs: number): SqliteDb {
  let db: SqliteDb;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw sqliteStoreError(error, `cannot open SQLite database ${path}`);
  }
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    const current = Number((db.prepare("SELECT max(version) AS v FROM schema_migrations").get() as { v: number | null }).v ?? 0);
    if (current > SQLITE_SCHEMA_VERSION) {
      throw new StoreError("schema_too_new", `SQLite database ${path} has schema version ${current}, newer than this Spool (${SQLITE_SCHEMA_VERSION}); refusing to open it`);
    }
    if (current < SQLITE_SCHEMA_VERSION) {
      throw new StoreError("unavailable", `SQLite database ${path} has schema version ${current}; start spool run once to migrate it to ${SQLITE_SCHEMA_VERSION}`);
    }
    return db;
  } catch (error) {
    db.close();
    throw sqliteStoreError(error, `cannot read SQLite database ${path}`);
  }
}

function migrate(db: SqliteDb, path: string, nowMs: number): void {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)");
  const current = Number((db.prepare("SELECT max(version) AS v FROM schema_migrations").get() as { v: number | null }).v ?? 0);
  if (current > SQLITE_SCHEMA_VERSION) {
    throw new StoreError(
      "schema_too_new",
      `SQLite database ${path} has schema version ${current}, newer than this Spool (${SQLITE_SCHEMA_VERSION}); refusing to open it`,
    );
  }
  const pending = SQLITE_MIGRATIONS.filter((m) => m.version > current);
  if (pending.length === 0) return;
  const record = db.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)");
  db.transaction(() => {
    for (const migration of pending) {
      applyMigration(db, migration);
      record.run(migration.version, nowMs);
    }
  }).immediate();
}

/** Maps a better-sqlite3 error to a StoreError whose message says what the operator can do. */
export function sqliteStoreError(error: unknown, context: string): StoreError {
  if (error instanceof StoreError) return error;
  const code = (error as { code?: string }).code ?? "";
  const detail = error instanceof Error ? error.message : String(error);
  if (code.startsWith("SQLITE_READONLY") || /readonly|read-only/i.test(detail)) {
    return new StoreError("read_only", `${context}: the database file is read-only (${detail})`, undefined, { cause: error });
  }
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
    return new StoreError("unavailable", `${context}: the database is locked by another process (${detail})`, undefined, { cause: error });
  }
  return new StoreError("unavailable", `${context}: ${detail}`, undefined, { cause: error });
}
