// Per-backend counters for the metrics layer, reported through a hook so the store does not import
// prom-client (spool_store_operation_*, spool_store_errors_total, spool_store_sqlite_*).
import type { MemoryStoreStats } from "./reports.js";
import { StoreError } from "./store.js";

export type SqliteEvent = "tx_commit" | "tx_rollback" | "busy" | "retry" | "checkpoint" | "checkpoint_error";

export interface StoreObserver {
  /** One store call finished; `errorKind` is the StoreError code (or "internal") when it threw. */
  operation(name: string, seconds: number, errorKind?: string): void;
  /**
   * SQLite-only events; `seconds` is set for timed events (write transactions, checkpoints), and
   * `durability` for commits (whether the commit waited for the fsync; see the Store contract).
   */
  sqliteEvent(event: SqliteEvent, seconds?: number, durability?: "durable" | "deferred"): void;
  /** Queued messages removed by a committed enqueue to make room (StoreLimits.dropOldest). */
  dropped(messages: number): void;
  /**
   * Memory backend only, called once at open: reads its footprint and guard numbers (health
   * details, spool_memory_* gauges) whenever asked. The other backends have no such numbers.
   */
  memoryStats?(read: () => MemoryStoreStats): void;
}

export const noopObserver: StoreObserver = {
  operation() {},
  sqliteEvent() {},
  dropped() {},
};

/** Times a store call and reports it, including the error kind when it fails (thrown or rejected). */
export async function observed<T>(observer: StoreObserver, name: string, run: () => T | Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    const result = await run();
    observer.operation(name, (performance.now() - started) / 1000);
    return result;
  } catch (error) {
    observer.operation(name, (performance.now() - started) / 1000, error instanceof StoreError ? error.code : "internal");
    throw error;
  }
}
