// The Store contract: every backend (memory, sqlite, postgres) implements this interface with the
// same observable behaviour, checked by one contract suite (test/store/contract.ts).
//
// Expected outcomes are values (lease conflicts, counts of changed items); failures of the whole
// call throw StoreError with a code the HTTP layer maps to a status. All times are epoch ms from the
// injected Clock; all durations are ms.

export type StoreBackend = "memory" | "sqlite" | "postgres";

export type MessageState = "queued" | "leased" | "delivered" | "dead" | "canceled";
export const MESSAGE_STATES: readonly MessageState[] = ["queued", "leased", "delivered", "dead", "canceled"];

export type StoreErrorCode =
  | "duplicate_id" // an id in the batch exists already or appears twice in the batch
  | "queue_full" // queue_limits.max_depth (queued + leased) would be exceeded
  | "memory_pressure" // memory backend: retained bytes/items guard
  | "invalid_argument" // a call the caller should have validated (empty id, batch too large, ...)
  | "unavailable" // the database cannot be reached or answered with an error
  | "read_only" // the database file cannot be written
  | "schema_too_new" // the database was migrated by a newer Spool
  | "closed"; // the store was closed

export class StoreError extends Error {
  override readonly name = "StoreError";
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    /** 0-based index of the offending item in an enqueue batch, when one item caused the failure. */
    readonly itemIndex?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export type Headers = Readonly<Record<string, string>>;

export interface NewMessage {
  id: string;
  route: string;
  target: string;
  payload: Uint8Array;
  headers: Headers;
  /** Trace context captured at ingress (e.g. traceparent, remote_addr, path). */
  trace?: Headers | null;
  /** Defaults to now. */
  receivedAtMs?: number;
  /** Defaults to now; a later value keeps the message invisible until then. */
  nextRunAtMs?: number;
}

export interface DequeueRequest {
  route: string;
  /** Only this delivery target of the route; all targets when absent. */
  target?: string;
  /** 1..MAX_DEQUEUE_BATCH. */
  batch: number;
  leaseTtlMs: number;
  /** Long-poll: wait up to this long for a message when none is ready. 0 or absent: answer at once. */
  maxWaitMs?: number;
}

export interface LeasedMessage {
  id: string;
  leaseId: string;
  route: string;
  target: string;
  payload: Uint8Array;
  headers: Headers;
  trace: Headers | null;
  receivedAtMs: number;
  /** 1 on first delivery. */
  attempt: number;
  leaseUntilMs: number;
}

export type LeaseConflictReason = "lease_not_found" | "lease_expired";

export interface LeaseConflict {
  leaseId: string;
  reason: LeaseConflictReason;
}

/** `settled` holds the lease ids that succeeded (including idempotent repeats), in request order. */
export interface LeaseOutcome {
  settled: string[];
  conflicts: LeaseConflict[];
  /**
   * Of `settled`, the leases that had already been settled the same way (an idempotent repeat
   * within the settled-lease memory): present only when there are some, so callers count each
   * settlement once.
   */
  repeated?: string[];
}

/** Restricts lease operations to one route: a lease of another route is `lease_not_found`. */
export interface LeaseScope {
  route?: string;
}

export type NackOptions = { dead?: false; delayMs: number } | { dead: true; reason?: string | null };

export interface MessageView {
  id: string;
  route: string;
  target: string;
  state: MessageState;
  receivedAtMs: number;
  attempt: number;
  nextRunAtMs: number;
  leaseUntilMs: number | null;
  deadReason: string | null;
  /** Present only when asked for (includePayload / includeHeaders / includeTrace). */
  payload?: Uint8Array;
  headers?: Headers;
  trace?: Headers | null;
}

export interface Selector {
  /** One route or several (the lead resolves application+endpoint_name to a route). */
  route?: string | readonly string[];
  target?: string;
}

/** Which large fields a message view carries (GET /messages include_payload/headers/trace). */
export interface MessageIncludes {
  payload?: boolean;
  headers?: boolean;
  trace?: boolean;
}

export interface MessageFilter extends Selector {
  state?: MessageState;
  /** Only messages with received_at < beforeMs. */
  beforeMs?: number;
  limit: number;
  includePayload?: boolean;
  includeHeaders?: boolean;
  includeTrace?: boolean;
}

/**
 * cancel: queued, leased, dead → canceled. requeue: dead, canceled → queued (attempt reset to 0).
 * resume: canceled → queued (attempt kept). dlq_requeue: dead → queued (attempt reset to 0).
 */
export type LifecycleOp = "cancel" | "requeue" | "resume" | "dlq_requeue";

export const LIFECYCLE_FROM_STATES: Readonly<Record<LifecycleOp, readonly MessageState[]>> = {
  cancel: ["queued", "leased", "dead"],
  requeue: ["dead", "canceled"],
  resume: ["canceled"],
  dlq_requeue: ["dead"],
};

export interface LifecycleFilter extends Selector {
  /** Must be one of LIFECYCLE_FROM_STATES[op]; all of them when absent. */
  state?: MessageState;
  beforeMs?: number;
  /** Max items to match and change; oldest received first. */
  limit: number;
  previewOnly?: boolean;
}

export interface FilterOutcome {
  /** Items the filter selects, capped by limit. */
  matched: number;
  /** 0 when previewOnly. */
  changed: number;
}

export type AttemptOutcome = "acked" | "retry" | "dead";

export interface NewAttempt {
  /** Message id (GET /attempts calls it event_id). */
  messageId: string;
  route: string;
  target: string;
  attempt: number;
  statusCode?: number | null;
  error?: string | null;
  outcome: AttemptOutcome;
  deadReason?: string | null;
}

export interface AttemptRecord {
  id: string;
  messageId: string;
  route: string;
  target: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  outcome: AttemptOutcome;
  deadReason: string | null;
  createdAtMs: number;
}

export interface AttemptFilter extends Selector {
  messageId?: string;
  outcome?: AttemptOutcome;
  /** Only attempts with created_at < beforeMs. */
  beforeMs?: number;
  limit: number;
}

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

/** Called whenever messages may have become ready; route undefined means "any route". */
export type ReadyListener = (route: string | undefined) => void;

export const MAX_ENQUEUE_BATCH = 1000;
export const MAX_DEQUEUE_BATCH = 1000;
export const MAX_LEASE_BATCH = 1000;
export const MAX_LIST_LIMIT = 1000;
export const MAX_IDS_PER_CALL = 1000;
/** A repeated ack/nack of a lease settled this recently succeeds (DECISIONS.md "Pull API"). */
export const SETTLED_LEASE_MEMORY_MS = 120_000;
/** How many rows aging_summary examines at most. */
export const AGING_SCAN_LIMIT = 100_000;
/** Health top_queued buckets (reference-behaviour §2 row 35). */
export const HEALTH_TOP_QUEUED = 10;

/**
 * Durability of the write paths (DECISIONS.md "Storage", README "Decisions"). Every call resolves only
 * after its commit. Enqueue, dequeue, extend and every operator change are also flushed to disk
 * before they resolve (an accepted message survives power loss, and so does a lease, so no message
 * is ever leased to two consumers at once). Ack, nack and attempt records are committed but may wait
 * for the next flushed commit (SQLite: synchronous=NORMAL for that commit; PostgreSQL:
 * synchronous_commit=off): a power loss or OS crash in that window (a Spool crash is not enough)
 * can only undo them, which leaves the message leased until its lease runs out and then delivers it
 * again, as at-least-once delivery allows.
 */
export interface Store {
  readonly backend: StoreBackend;

  /** All-or-nothing. Throws StoreError duplicate_id | queue_full | memory_pressure | invalid_argument. */
  enqueue(items: readonly NewMessage[]): Promise<void>;

  /**
   * Leases ready messages of a route in next_run_at, received_at order. With maxWaitMs it waits for a
   * message to become ready; aborting the signal ends the wait and leases nothing.
   */
  dequeue(request: DequeueRequest, signal?: AbortSignal): Promise<LeasedMessage[]>;

  ack(leaseIds: readonly string[], scope?: LeaseScope): Promise<LeaseOutcome>;
  nack(leaseIds: readonly string[], how: NackOptions, scope?: LeaseScope): Promise<LeaseOutcome>;
  /** The lease then runs until max(lease_until, now + leaseTtlMs); the caller caps leaseTtlMs. */
  extend(leaseIds: readonly string[], leaseTtlMs: number, scope?: LeaseScope): Promise<LeaseOutcome>;

  /** Subscribes to "messages may be ready" signals; returns the unsubscribe function. */
  onReady(listener: ReadyListener): () => void;

  recordAttempts(attempts: readonly NewAttempt[]): Promise<void>;
  /** Newest first (created_at desc, then id desc). */
  listAttempts(filter: AttemptFilter): Promise<AttemptRecord[]>;

  /** Newest first (received_at desc, then id desc). */
  listMessages(filter: MessageFilter): Promise<MessageView[]>;
  getMessages(ids: readonly string[], include?: MessageIncludes): Promise<MessageView[]>;

  /** By ids: returns how many changed; ids in other states or unknown ids are not counted. */
  changeByIds(op: LifecycleOp, ids: readonly string[]): Promise<number>;
  changeByFilter(op: LifecycleOp, filter: LifecycleFilter): Promise<FilterOutcome>;
  /** DLQ delete: removes dead messages by id; returns how many were deleted. */
  deleteDead(ids: readonly string[]): Promise<number>;

  queueStats(): Promise<QueueStats>;
  topQueued(selector: Selector, limit: number): Promise<TopQueuedReport>;
  oldestQueued(selector: Selector, limit: number): Promise<OldestQueuedReport>;
  agingSummary(selector: Selector, states: readonly BacklogState[], limit: number): Promise<AgingSummaryReport>;
  /** Stores one sample per route/target with queued, leased or dead messages. */
  captureTrendSample(): Promise<number>;
  trends(request: TrendsRequest): Promise<TrendsReport>;

  /** Applies the retention settings once, in small chunks so traffic keeps flowing. */
  prune(): Promise<PruneReport>;

  /** Memory backend: footprint and guard numbers; other backends: null. */
  memoryStats(): MemoryStoreStats | null;

  close(): Promise<void>;
}
