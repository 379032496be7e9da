// Remembers recently settled leases so a worker that retries an ack (or nack) after a timeout gets
// success, while ack after nack (or the reverse) stays a conflict (DECISIONS.md "Pull API").
// In-process, as in the reference system: used by the memory and SQLite backends, whose database
// belongs to one process. PostgreSQL keeps the same facts in a table shared by all instances.
import { SETTLED_LEASE_MEMORY_MS } from "./store.js";

export type SettleKind = "ack" | "nack";

/** Bounded so a burst of acks cannot grow memory without limit. */
const DEFAULT_CAPACITY = 200_000;

export class SettledLeases {
  private readonly settled = new Map<string, { kind: SettleKind; atMs: number }>();

  constructor(private readonly capacity = DEFAULT_CAPACITY) {}

  remember(leaseId: string, kind: SettleKind, atMs: number): void {
    this.settled.set(leaseId, { kind, atMs });
    if (this.settled.size > this.capacity) {
      const oldest = this.settled.keys().next().value;
      if (oldest !== undefined) this.settled.delete(oldest);
    }
  }

  /** The kind a lease was settled with within the memory window, or undefined. */
  lookup(leaseId: string, nowMs: number): SettleKind | undefined {
    this.forgetOlderThan(nowMs - SETTLED_LEASE_MEMORY_MS);
    const entry = this.settled.get(leaseId);
    return entry && entry.atMs > nowMs - SETTLED_LEASE_MEMORY_MS ? entry.kind : undefined;
  }

  private forgetOlderThan(cutoffMs: number): void {
    for (const [leaseId, entry] of this.settled) {
      if (entry.atMs > cutoffMs) break;
      this.settled.delete(leaseId);
    }
  }
}
