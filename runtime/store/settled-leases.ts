// Remembers recently settled leases so a worker that retries an ack (or nack) after a timeout gets
// success, while ack after nack (or the reverse) stays a conflict (docs/decisions.md D19).
// In-process, as in the reference system: used by the memory and SQLite backends, whose database
// belongs to one process. PostgreSQL keeps the same facts in a table shared by all instances.
//
// Two generations of Maps instead of one Map trimmed from its oldest key: V8 leaves a hole for every
// deleted Map entry until it rehashes, and `keys().next()` walks those holes, so evicting one entry
// per settle cost time in proportion to the evictions before it (17% of a batch-32 drain at 1M
// queued). Here a full generation is dropped whole, in O(1).
import { SETTLED_LEASE_MEMORY_MS } from "./store.js";

/**
 * How a lease was settled. A nack that dead-letters (`dead`) and one that requeues (`nack`) are
 * different answers: a repeat succeeds only as the same kind, so a worker is never told a message
 * went to the DLQ when an earlier nack had requeued it (or the reverse).
 */
export type SettleKind = "ack" | "nack" | "dead";

/** Bounded so a burst of acks cannot grow memory without limit. */
const DEFAULT_CAPACITY = 200_000;

interface Generation {
  readonly entries: Map<string, { kind: SettleKind; atMs: number; route: string | undefined }>;
  newestAtMs: number;
}

const newGeneration = (): Generation => ({ entries: new Map(), newestAtMs: -Infinity });

export class SettledLeases {
  private current = newGeneration();
  private previous = newGeneration();
  private readonly generationSize: number;

  /** At most `capacity` leases are held; the newest `capacity / 2` are always among them. */
  constructor(capacity = DEFAULT_CAPACITY) {
    this.generationSize = Math.max(1, Math.floor(capacity / 2));
  }

  /** How many leases are held now (both generations). */
  get size(): number {
    return this.current.entries.size + this.previous.entries.size;
  }

  /** `route`: the lease's route, when known; a repeat through another route is then not this lease. */
  remember(leaseId: string, kind: SettleKind, atMs: number, route?: string): void {
    if (this.current.entries.size >= this.generationSize) this.rotate();
    this.previous.entries.delete(leaseId);
    this.current.entries.set(leaseId, { kind, atMs, route });
    if (atMs > this.current.newestAtMs) this.current.newestAtMs = atMs;
  }

  /**
   * The kind a lease was settled with within the memory window, or undefined; also undefined when
   * asked through a route other than the lease's (Pull API leases are scoped to their route: a
   * foreign lease is lease_not_found, settled or not).
   */
  lookup(leaseId: string, nowMs: number, route?: string): SettleKind | undefined {
    const cutoffMs = nowMs - SETTLED_LEASE_MEMORY_MS;
    this.forgetOlderThan(cutoffMs);
    const entry = this.current.entries.get(leaseId) ?? this.previous.entries.get(leaseId);
    if (!entry || entry.atMs <= cutoffMs) return undefined;
    if (route !== undefined && entry.route !== undefined && entry.route !== route) return undefined;
    return entry.kind;
  }

  private rotate(): void {
    this.previous = this.current;
    this.current = newGeneration();
  }

  /** Drops whole generations whose newest entry is past the window, so idle memory is returned. */
  private forgetOlderThan(cutoffMs: number): void {
    if (this.current.entries.size > 0 && this.current.newestAtMs <= cutoffMs) this.current = newGeneration();
    if (this.previous.entries.size > 0 && this.previous.newestAtMs <= cutoffMs) this.previous = newGeneration();
  }
}
