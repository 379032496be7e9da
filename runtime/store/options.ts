// Limits and retention the store enforces, already decoded by the compiler (ms, bytes, counts).
// Absent or null means "off": defaults (max_depth 10000, queue_retention 7d, ...) live in
// compiler/defaults.ts, not here, so the store never invents policy.

export interface StoreLimits {
  /** queue_limits.max_depth: queued + leased across all routes. */
  maxDepth?: number | null;
  /**
   * queue_limits.drop_policy drop_oldest: an enqueue that would pass max_depth first removes the
   * oldest queued messages (received_at, then id; never a leased one) to make room for itself. When
   * removing every queued message would not be enough, the batch is refused queue_full and nothing
   * is removed. Off (reject): the batch is refused.
   */
  dropOldest?: boolean;
  /** queue_retention.max_age: queued messages older than this (by received_at) are removed. */
  queueRetentionMs?: number | null;
  /** delivered_retention.max_age: off means ack deletes the row; on keeps it as `delivered`. */
  deliveredRetentionMs?: number | null;
  /** dlq_retention.max_age (by the time the message died). */
  dlqRetentionMs?: number | null;
  /** dlq_retention.max_depth: keeps the newest dead messages. */
  dlqMaxDepth?: number | null;
  attemptsRetentionMs?: number | null;
  attemptsMaxRows?: number | null;
  /** Trend samples are kept this long (reference: 30d). */
  trendRetentionMs?: number | null;
  /** Memory backend guard (docs/decisions.md D46: 503 memory_pressure). */
  memoryMaxRetainedBytes?: number | null;
  memoryMaxRetainedItems?: number | null;
}

/** Background work the store schedules itself; 0 or absent disables it (tests call prune() directly). */
export interface StoreSchedule {
  /** queue_retention.prune_interval. */
  pruneIntervalMs?: number;
  /** Trend sample capture interval (reference: 1m). */
  trendSampleIntervalMs?: number;
}

export type StoreOptions = StoreLimits & StoreSchedule;

export function positiveOrNull(value: number | null | undefined): number | null {
  return value !== undefined && value !== null && value > 0 ? value : null;
}
