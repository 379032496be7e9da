// Runtime secret versions in the PostgreSQL store (table runtime_secrets, migration 5): sealed
// blobs only, one table every instance of the schema shares.
import { runtimeSecretOf, type RuntimeSecretKey, type RuntimeSecretRow, type StoredRuntimeSecret } from "../records.js";
import { StoreError } from "../store.js";
import type { PgContext } from "./context.js";

export async function listRuntimeSecrets(cx: PgContext, pool?: string): Promise<RuntimeSecretRow[]> {
  const rows =
    pool === undefined
      ? await cx.sql`SELECT pool_name, id, sealed, not_before, not_after, created_at FROM runtime_secrets ORDER BY created_at, pool_name, id`
      : await cx.sql`SELECT pool_name, id, sealed, not_before, not_after, created_at FROM runtime_secrets WHERE pool_name = ${pool} ORDER BY created_at, pool_name, id`;
  return rows.map((row) => runtimeSecretOf(row as unknown as StoredRuntimeSecret));
}

export async function addRuntimeSecret(cx: PgContext, row: RuntimeSecretRow): Promise<void> {
  try {
    await cx.sql`INSERT INTO runtime_secrets (pool_name, id, sealed, not_before, not_after, created_at)
      VALUES (${row.pool}, ${row.id}, ${Buffer.from(row.sealed)}, ${row.notBeforeMs}, ${row.notAfterMs}, ${row.createdAtMs})`;
  } catch (error) {
    if ((error as { code?: string }).code === "23505") throw new StoreError("duplicate_id", `secret ${row.pool}/${row.id} already exists`);
    throw error;
  }
}

export async function deleteRuntimeSecret(cx: PgContext, pool: string, id: string): Promise<boolean> {
  const rows = await cx.sql`DELETE FROM runtime_secrets WHERE pool_name = ${pool} AND id = ${id} RETURNING id`;
  return rows.length > 0;
}

export async function pruneRuntimeSecrets(cx: PgContext, pool?: string): Promise<RuntimeSecretKey[]> {
  const nowMs = cx.clock.now();
  const rows =
    pool === undefined
      ? await cx.sql`DELETE FROM runtime_secrets WHERE not_after IS NOT NULL AND not_after <= ${nowMs} RETURNING pool_name, id`
      : await cx.sql`DELETE FROM runtime_secrets WHERE pool_name = ${pool} AND not_after IS NOT NULL AND not_after <= ${nowMs} RETURNING pool_name, id`;
  return rows.map((row) => ({ pool: row.pool_name, id: row.id }));
}
