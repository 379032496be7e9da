// Runtime secret versions in the memory store: sealed like everywhere else, gone at exit (the app
// warns runtime_secrets_memory_only).
import type { Clock } from "../../time/clock.js";
import type { RuntimeSecretKey, RuntimeSecretRow } from "../records.js";
import { StoreError } from "../store.js";

export class RuntimeSecretTable {
  private readonly rows: RuntimeSecretRow[] = [];

  constructor(private readonly clock: Clock) {}

  list(pool?: string): RuntimeSecretRow[] {
    return this.rows
      .filter((row) => pool === undefined || row.pool === pool)
      .sort((a, b) => a.createdAtMs - b.createdAtMs || compare(a.pool, b.pool) || compare(a.id, b.id))
      .map((row) => ({ ...row, sealed: Buffer.from(row.sealed) }));
  }

  add(row: RuntimeSecretRow): void {
    if (this.rows.some((r) => r.pool === row.pool && r.id === row.id)) throw new StoreError("duplicate_id", `secret ${row.pool}/${row.id} already exists`);
    this.rows.push({ ...row, sealed: Buffer.from(row.sealed) });
  }

  delete(pool: string, id: string): boolean {
    const index = this.rows.findIndex((r) => r.pool === pool && r.id === id);
    if (index < 0) return false;
    this.rows.splice(index, 1);
    return true;
  }

  prune(pool?: string): RuntimeSecretKey[] {
    const nowMs = this.clock.now();
    const removed: RuntimeSecretKey[] = [];
    for (let i = this.rows.length - 1; i >= 0; i--) {
      const row = this.rows[i];
      if ((pool === undefined || row.pool === pool) && row.notAfterMs !== null && row.notAfterMs <= nowMs) {
        removed.unshift({ pool: row.pool, id: row.id });
        this.rows.splice(i, 1);
      }
    }
    return removed;
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
