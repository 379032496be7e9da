// Runtime secret versions in the SQLite store (table runtime_secrets, migration 5): sealed blobs
// only; each write is one immediate, durable transaction.
import { runtimeSecretOf, type RuntimeSecretKey, type RuntimeSecretRow, type StoredRuntimeSecret } from "../records.js";
import { StoreError } from "../store.js";
import type { SqliteContext } from "./context.js";

const COLUMNS = "pool_name, id, sealed, not_before, not_after, created_at";

export function listRuntimeSecrets(cx: SqliteContext, pool?: string): RuntimeSecretRow[] {
  const rows = (
    pool === undefined
      ? cx.conn.dynamic.get(`SELECT ${COLUMNS} FROM runtime_secrets ORDER BY created_at, pool_name, id`).all()
      : cx.conn.dynamic.get(`SELECT ${COLUMNS} FROM runtime_secrets WHERE pool_name = ? ORDER BY created_at, pool_name, id`).all(pool)
  ) as StoredRuntimeSecret[];
  return rows.map(runtimeSecretOf);
}

export function addRuntimeSecret(cx: SqliteContext, row: RuntimeSecretRow): void {
  try {
    cx.conn.write(() =>
      cx.conn.dynamic
        .get(`INSERT INTO runtime_secrets (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`)
        .run(row.pool, row.id, Buffer.from(row.sealed), row.notBeforeMs, row.notAfterMs, row.createdAtMs),
    );
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "SQLITE_CONSTRAINT_UNIQUE") {
      throw new StoreError("duplicate_id", `secret ${row.pool}/${row.id} already exists`);
    }
    throw error;
  }
}

export function deleteRuntimeSecret(cx: SqliteContext, pool: string, id: string): boolean {
  return cx.conn.write(() => cx.conn.dynamic.get("DELETE FROM runtime_secrets WHERE pool_name = ? AND id = ?").run(pool, id).changes) > 0;
}

export function pruneRuntimeSecrets(cx: SqliteContext, pool?: string): RuntimeSecretKey[] {
  const nowMs = cx.clock.now();
  const rows = cx.conn.write(() =>
    pool === undefined
      ? cx.conn.dynamic.get("DELETE FROM runtime_secrets WHERE not_after IS NOT NULL AND not_after <= ? RETURNING pool_name, id").all(nowMs)
      : cx.conn.dynamic.get("DELETE FROM runtime_secrets WHERE pool_name = ? AND not_after IS NOT NULL AND not_after <= ? RETURNING pool_name, id").all(pool, nowMs),
  ) as { pool_name: string; id: string }[];
  return rows.map((row) => ({ pool: row.pool_name, id: row.id }));
}
