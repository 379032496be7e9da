// The Store contract: every backend (memory, sqlite, postgres) implements this interface with the
// same observable behaviour, checked by one contract suite (test/store/contract.ts).
//
// Expected outcomes are values (lease conflicts, counts of changed items); failures of the whole
// call throw StoreError with a code the error catalogue (runtime/errors.ts) maps to an API answer.
// All times are epoch ms from the injected Clock; all durations are ms. What the calls take and
// return is records.ts; the queue, backlog, trend and prune reports are reports.ts.
import type { AttemptFilter, AttemptRecord, DequeueRequest, RuntimeSecretKey, RuntimeSecretRow, FilterOutcome, LeaseOutcome, LeaseScope, LeasedMessage, LifecycleFilter, LifecycleOp, MessageFilter, MessageIncludes, MessageView, NackOptions, NewAttempt, NewMessage, Selector } from "./records.js";
import type { AgingSummaryReport, BacklogState, OldestQueuedReport, PruneReport, QueueStats, TopQueuedReport, TrendsReport, TrendsRequest } from "./reports.js";

export type StoreBackend = "memory" | "sqlite" | "postgres";

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

/** Called whenever messages may have become ready; route undefined means "any route". */
export type ReadyListener = (route: string | undefined) => void;

export const MAX_ENQUEUE_BATCH = 1000;
export const MAX_DEQUEUE_BATCH = 1000;
export const MAX_LEASE_BATCH = 1000;
export const MAX_LIST_LIMIT = 1000;
export const MAX_IDS_PER_CALL = 1000;
/** A repeated ack/nack of a lease settled this recently succeeds: a worker retrying a lost answer sees no conflict. */
export const SETTLED_LEASE_MEMORY_MS = 120_000;
/** How many rows aging_summary examines at most. */
export const AGING_SCAN_LIMIT = 100_000;
/** Health top_queued buckets: the ten the reference implementation reports. */
export const HEALTH_TOP_QUEUED = 10;

/**
 * Durability of the write paths (docs/decisions.md D40, D41). Every call resolves only
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

  /** Runtime secret versions (docs/secrets.md), of one pool or all; by created_at, then pool and id. */
  listRuntimeSecrets(pool?: string): Promise<RuntimeSecretRow[]>;
  /** Throws StoreError duplicate_id when the pool already holds the id. */
  addRuntimeSecret(row: RuntimeSecretRow): Promise<void>;
  /** False when the pool holds no such id. */
  deleteRuntimeSecret(pool: string, id: string): Promise<boolean>;
  /** Deletes the versions (of one pool or all) whose not_after ≤ now; returns them. */
  pruneRuntimeSecrets(pool?: string): Promise<RuntimeSecretKey[]>;

  close(): Promise<void>;
}
