// The Store's reports: queue stats for health and metrics, the Admin API's backlog and trend
// reports, and what one retention pass removed.
import type { MessageState, Selector } from "./records.js";

export interface QueuedBucket {
  route: string;
  target: string;
  queued: number;
  oldestQueuedReceivedAtMs: number;
  earliestQueuedNextRunAtMs: number;
}

export interface QueueStats {
  byState: Record<MessageState, number>;
  /** queued + leased + dead (health `diagnostics.queue.total`). */
  total: number;
  oldestQueuedReceivedAtMs: number | null;
  oldestQueuedAgeMs: number | null;
  earliestQueuedNextRunAtMs: number | null;
  /** How long the most overdue ready message has waited past its next_run_at; 0 when none is overdue. */
  readyLagMs: number | null;
  /** At most 10 buckets, most queued first. */
  topQueued: QueuedBucket[];
  /** Leased messages by route; routes without a lease are absent (spool_pull_lease_active). */
  leasedByRoute: Record<string, number>;
}

export interface TopQueuedReport {
  queueTotal: number;
  queuedTotal: number;
  limit: number;
  truncated: boolean;
  oldestQueuedReceivedAtMs: number | null;
  earliestQueuedNextRunAtMs: number | null;
  items: QueuedBucket[];
}

export interface OldestQueuedItem {
  id: string;
  route: string;
  target: string;
  receivedAtMs: number;
  attempt: number;
  nextRunAtMs: number;
}

export interface OldestQueuedReport {
  queueTotal: number;
  queuedTotal: number;
  limit: number;
  returned: number;
  truncated: boolean;
  /** The earliest next_run_at among all queued messages the selector matches, not only those returned. */
  earliestQueuedNextRunAtMs: number | null;
  items: OldestQueuedItem[];
}

export type BacklogState = "queued" | "leased" | "dead";

export interface AgePercentiles {
  p50: number;
  p90: number;
  p99: number;
}

/** Counts of messages whose age falls into each window (upper bounds exclusive). */
export interface AgeWindows {
  le_5m: number;
  gt_5m_le_15m: number;
  gt_15m_le_1h: number;
  gt_1h_le_6h: number;
  gt_6h: number;
}

export interface AgingBucket {
  route: string;
  target: string;
  stateCounts: Record<BacklogState, number>;
  totalObserved: number;
  ageSampleCount: number;
  ageWindows: AgeWindows;
  agePercentilesSeconds: AgePercentiles | null;
  oldestQueuedReceivedAtMs: number | null;
  newestQueuedReceivedAtMs: number | null;
  earliestQueuedNextRunAtMs: number | null;
  readyOverdueCount: number;
  maxReadyLagMs: number | null;
}

export interface AgingSummaryReport {
  queueTotal: number;
  queuedTotal: number;
  limit: number;
  states: BacklogState[];
  /** Rows examined; the scan stops at AGING_SCAN_LIMIT. */
  scanned: number;
  /** True when the scan limit cut the source short (the figures describe the oldest rows scanned). */
  sourceBounded: boolean;
  bucketCount: number;
  /** True when more buckets existed than `limit`. */
  truncated: boolean;
  ageSampleCount: number;
  ageWindows: AgeWindows;
  agePercentilesSeconds: AgePercentiles | null;
  /** Over every queued row scanned (all buckets, not only the `limit` returned). */
  oldestQueuedReceivedAtMs: number | null;
  earliestQueuedNextRunAtMs: number | null;
  items: AgingBucket[];
}

export interface TrendSample {
  capturedAtMs: number;
  route: string;
  target: string;
  queued: number;
  leased: number;
  dead: number;
}

export interface TrendPoint {
  bucketStartMs: number;
  bucketEndMs: number;
  sampleCount: number;
  lastCapturedAtMs: number | null;
  queuedLast: number;
  leasedLast: number;
  deadLast: number;
  totalLast: number;
  queuedMax: number;
  leasedMax: number;
  deadMax: number;
  totalMax: number;
}

export interface TrendsRequest extends Selector {
  windowMs: number;
  stepMs: number;
  untilMs: number;
}

export interface TrendsReport {
  windowMs: number;
  stepMs: number;
  sinceMs: number;
  untilMs: number;
  sampleCount: number;
  pointCount: number;
  nonEmptyPointCount: number;
  truncated: boolean;
  latestCapturedAtMs: number | null;
  latestTotal: number;
  maxTotal: number;
  items: TrendPoint[];
}

export interface PruneReport {
  queued: number;
  delivered: number;
  dead: number;
  attempts: number;
  trendSamples: number;
}

/** Memory backend only: the numbers `diagnostics.store` reports on /healthz?details=1. */
export interface MemoryStoreStats {
  backend: "memory";
  itemsByState: Record<MessageState, number>;
  retainedBytesByState: Record<MessageState, number>;
  retainedBytesTotal: number;
  memoryPressure: {
    active: boolean;
    reason: string;
    retainedItemLimit: number | null;
    retainedBytesLimit: number | null;
    rejectedTotal: number;
  };
}
