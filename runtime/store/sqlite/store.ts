// The SQLite backend (the embedded default): one connection owned by this process, WAL with
// synchronous=FULL, statements prepared once. This file wires the parts together and gives every
// call the same envelope (observed, refused after close, SQLite errors mapped to StoreError):
//   connection.ts  the connection, its group commit (the hot paths) and plain write transactions
//   enqueue.ts     admission (max_depth, drop_oldest) and inserts
//   leases.ts      dequeue, ack, nack, extend;  lifecycle.ts  cancel, requeue, resume, DLQ
//   messages.ts    message lists and lookups;  attempts.ts  attempt records
//   analytics.ts   queue stats, backlog reports, trend samples;  retention.ts  prune
import type { Clock } from "../../clock.js";
import { observed, type StoreObserver } from "../observer.js";
import type { StoreLimits } from "../options.js";
import { longPoll, ReadySignal } from "../ready-signal.js";
import type { AttemptFilter, AttemptRecord, DequeueRequest, FilterOutcome, LeasedMessage, LeaseOutcome, LeaseScope, LifecycleFilter, LifecycleOp, MessageFilter, MessageIncludes, MessageView, NackOptions, NewAttempt, NewMessage, Selector } from "../records.js";
import type { AgingSummaryReport, BacklogState, OldestQueuedReport, PruneReport, QueueStats, TopQueuedReport, TrendsReport, TrendsRequest } from "../reports.js";
import type { ReadyListener, Store } from "../store.js";
import { validateDequeue, validateEnqueueBatch, validateLeaseTtl } from "../validate.js";
import * as analytics from "./analytics.js";
import * as attempts from "./attempts.js";
import { SqliteConnection } from "./connection.js";
import type { SqliteContext } from "./context.js";
import { applyDropPolicyIndex, enqueue } from "./enqueue.js";
import { LeaseOps } from "./leases.js";
import * as lifecycle from "./lifecycle.js";
import * as messages from "./messages.js";
import { sqliteStoreError } from "./open-db.js";
import { prune } from "./retention.js";

export interface SqliteStoreDeps {
  path: string;
  busyTimeoutMs: number;
  clock: Clock;
  observer: StoreObserver;
  limits: StoreLimits;
}

export class SqliteStore implements Store {
  readonly backend = "sqlite" as const;
  private readonly cx: SqliteContext;
  private readonly conn: SqliteConnection;
  private readonly ready: ReadySignal;
  private readonly leases: LeaseOps;

  constructor(deps: SqliteStoreDeps) {
    this.conn = new SqliteConnection(deps.path, deps.busyTimeoutMs, deps.clock, deps.observer);
    this.ready = new ReadySignal(deps.clock);
    this.cx = { conn: this.conn, sql: this.conn.sql, clock: deps.clock, limits: deps.limits, ready: this.ready, observer: deps.observer };
    applyDropPolicyIndex(this.cx);
    this.leases = new LeaseOps(this.cx);
  }

  onReady(listener: ReadyListener): () => void {
    return this.ready.subscribe(listener);
  }

  enqueue(items: readonly NewMessage[]): Promise<void> {
    // Not an async arrow: the group's promise is returned as it is, one promise and hop fewer per
    // request; a synchronous throw still becomes observed()'s rejection.
    return observed(this.cx.observer, "enqueue", () => {
      this.conn.assertOpen();
      validateEnqueueBatch(items);
      return enqueue(this.cx, items);
    });
  }

  async dequeue(request: DequeueRequest, signal?: AbortSignal): Promise<LeasedMessage[]> {
    validateDequeue(request);
    const attempt = () => this.run("dequeue", () => this.leases.dequeue(request));
    if (!request.maxWaitMs) return attempt();
    return longPoll({ route: request.route, maxWaitMs: request.maxWaitMs, signal, clock: this.cx.clock, ready: this.ready }, attempt);
  }

  ack(leaseIds: readonly string[], scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.run("ack", () => this.leases.ack(leaseIds, scope));
  }

  nack(leaseIds: readonly string[], how: NackOptions, scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.run("nack", () => this.leases.nack(leaseIds, how, scope));
  }

  extend(leaseIds: readonly string[], leaseTtlMs: number, scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.run("extend", () => {
      validateLeaseTtl(leaseTtlMs);
      return this.leases.extend(leaseIds, leaseTtlMs, scope);
    });
  }

  recordAttempts(records: readonly NewAttempt[]): Promise<void> {
    return this.run("record_attempts", () => attempts.recordAttempts(this.cx, records));
  }

  listAttempts(filter: AttemptFilter): Promise<AttemptRecord[]> {
    return this.run("list_attempts", () => attempts.listAttempts(this.cx, filter));
  }

  listMessages(filter: MessageFilter): Promise<MessageView[]> {
    return this.run("list_messages", () => messages.listMessages(this.cx, filter));
  }

  getMessages(ids: readonly string[], include: MessageIncludes = {}): Promise<MessageView[]> {
    return this.run("get_messages", () => messages.getMessages(this.cx, ids, include));
  }

  changeByIds(op: LifecycleOp, ids: readonly string[]): Promise<number> {
    return this.run(op, () => lifecycle.changeByIds(this.cx, op, ids));
  }

  changeByFilter(op: LifecycleOp, filter: LifecycleFilter): Promise<FilterOutcome> {
    return this.run(`${op}_by_filter`, () => lifecycle.changeByFilter(this.cx, op, filter));
  }

  deleteDead(ids: readonly string[]): Promise<number> {
    return this.run("dlq_delete", () => lifecycle.deleteDead(this.cx, ids));
  }

  queueStats(): Promise<QueueStats> {
    return this.run("queue_stats", () => analytics.queueStats(this.cx));
  }

  topQueued(selector: Selector, limit: number): Promise<TopQueuedReport> {
    return this.run("backlog_top_queued", () => analytics.topQueued(this.cx, selector, limit));
  }

  oldestQueued(selector: Selector, limit: number): Promise<OldestQueuedReport> {
    return this.run("backlog_oldest_queued", () => analytics.oldestQueued(this.cx, selector, limit));
  }

  agingSummary(selector: Selector, states: readonly BacklogState[], limit: number): Promise<AgingSummaryReport> {
    return this.run("backlog_aging_summary", () => analytics.agingSummary(this.cx, selector, states, limit));
  }

  captureTrendSample(): Promise<number> {
    return this.run("capture_trend_sample", () => analytics.captureTrendSample(this.cx));
  }

  trends(request: TrendsRequest): Promise<TrendsReport> {
    return this.run("backlog_trends", () => analytics.trends(this.cx, request));
  }

  prune(): Promise<PruneReport> {
    return this.run("prune", () => prune(this.cx));
  }

  async close(): Promise<void> {
    this.ready.close();
    await this.conn.close();
  }

  /**
   * Observed and refused after close; a synchronous SQLite error becomes a StoreError. The hot paths
   * (enqueue, leases, attempt records) return the promise of the group commit they joined, which
   * settles with StoreErrors of its own.
   */
  private run<T>(operation: string, work: () => T | Promise<T>): Promise<T> {
    return observed(this.cx.observer, operation, async () => {
      this.conn.assertOpen();
      try {
        return work();
      } catch (error) {
        throw sqliteStoreError(error, operation);
      }
    });
  }
}
