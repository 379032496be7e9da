// The memory backend: same semantics as SQLite and PostgreSQL, nothing durable. Every call validates
// first and mutates second, so a refused batch changes nothing. This file wires the parts together
// and gives every call the same envelope (observed, refused after close):
//   table.ts       rows and the indexes that keep dequeue/ack O(log n) at a 1M backlog
//   enqueue.ts     admission (ids, max_depth) and inserts;  guard.ts  the retained-footprint guard
//   leases.ts      dequeue, ack, nack, extend;  lifecycle.ts  cancel, requeue, resume, DLQ
//   messages.ts    message lists and lookups;  attempts.ts  attempt records
//   analytics.ts   queue stats, backlog reports, trend samples;  retention.ts  prune
import type { Clock } from "../../clock.js";
import { observed, type StoreObserver } from "../observer.js";
import type { StoreLimits } from "../options.js";
import { longPoll, ReadySignal } from "../ready-signal.js";
import { SettledLeases } from "../settled-leases.js";
import type { AttemptFilter, AttemptRecord, DequeueRequest, FilterOutcome, LeasedMessage, LeaseOutcome, LeaseScope, LifecycleFilter, LifecycleOp, MessageFilter, MessageIncludes, MessageView, NackOptions, NewAttempt, NewMessage, Selector } from "../records.js";
import type { AgingSummaryReport, BacklogState, OldestQueuedReport, PruneReport, QueueStats, TopQueuedReport, TrendsReport, TrendsRequest } from "../reports.js";
import { StoreError, type ReadyListener, type Store } from "../store.js";
import { validateDequeue } from "../validate.js";
import * as analytics from "./analytics.js";
import { AttemptLog } from "./attempts.js";
import type { MemoryContext } from "./context.js";
import { enqueue } from "./enqueue.js";
import { MemoryGuard } from "./guard.js";
import { LeaseOps } from "./leases.js";
import * as lifecycle from "./lifecycle.js";
import * as messages from "./messages.js";
import { prune } from "./retention.js";
import { MessageTable } from "./table.js";

export interface MemoryStoreDeps {
  clock: Clock;
  observer: StoreObserver;
  limits: StoreLimits;
}

export class MemoryStore implements Store {
  readonly backend = "memory" as const;
  private readonly cx: MemoryContext;
  private readonly ready: ReadySignal;
  private readonly guard: MemoryGuard;
  private readonly leases: LeaseOps;
  private readonly attempts = new AttemptLog();
  private readonly trendLog = new analytics.TrendLog();
  private readonly observer: StoreObserver;
  private closed = false;

  constructor(deps: MemoryStoreDeps) {
    this.observer = deps.observer;
    this.ready = new ReadySignal(deps.clock);
    const table = new MessageTable();
    this.cx = { table, clock: deps.clock, limits: deps.limits, ready: this.ready };
    this.guard = new MemoryGuard(table, deps.limits);
    this.leases = new LeaseOps(this.cx, new SettledLeases());
    deps.observer.memoryStats?.(() => this.guard.stats());
  }

  onReady(listener: ReadyListener): () => void {
    return this.ready.subscribe(listener);
  }

  enqueue(items: readonly NewMessage[]): Promise<void> {
    return this.run("enqueue", () => {
      const dropped = enqueue(this.cx, this.guard, items);
      if (dropped > 0) this.observer.dropped(dropped);
    });
  }

  async dequeue(request: DequeueRequest, signal?: AbortSignal): Promise<LeasedMessage[]> {
    validateDequeue(request);
    const attempt = () => this.run("dequeue", () => this.leases.leaseReady(request));
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
    return this.run("extend", () => this.leases.extend(leaseIds, leaseTtlMs, scope));
  }

  recordAttempts(records: readonly NewAttempt[]): Promise<void> {
    return this.run("record_attempts", () => this.attempts.record(records, this.cx.clock.now()));
  }

  listAttempts(filter: AttemptFilter): Promise<AttemptRecord[]> {
    return this.run("list_attempts", () => this.attempts.list(filter));
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
    return this.run("capture_trend_sample", () => this.trendLog.capture(this.cx));
  }

  trends(request: TrendsRequest): Promise<TrendsReport> {
    return this.run("backlog_trends", () => this.trendLog.trends(request));
  }

  prune(): Promise<PruneReport> {
    return this.run("prune", () => prune(this.cx, this.attempts, this.trendLog));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.ready.close();
  }

  /** Every call is observed and refused after close; the work itself is synchronous. */
  private run<T>(operation: string, work: () => T): Promise<T> {
    return observed(this.observer, operation, async () => {
      if (this.closed) throw new StoreError("closed", "the store is closed");
      return work();
    });
  }
}
