// The PostgreSQL backend: several Spool processes share one schema. This file wires the parts
// together and gives every call the same envelope (observed, refused after close, driver errors
// mapped to StoreError):
//   enqueue.ts      group-committed inserts with exact admission across instances
//   leases.ts       dequeue with FOR UPDATE SKIP LOCKED; ack, nack, extend; lease expiry
//   lifecycle.ts    cancel, requeue, resume, DLQ requeue and delete
//   messages.ts     message lists and lookups;  attempts.ts  attempt records
//   analytics.ts    queue stats, backlog reports, trend samples;  retention.ts  prune
//   wake-listener.ts  LISTEN/NOTIFY wake-ups from other instances (with the long poll's 1 s
//                     re-check as the fallback), re-established whenever the session drops
import type { Clock } from "../../clock.js";
import { observed, type StoreObserver } from "../observer.js";
import type { StoreLimits } from "../options.js";
import { longPoll, ReadySignal } from "../ready-signal.js";
import type { AttemptFilter, AttemptRecord, DequeueRequest, FilterOutcome, LeasedMessage, LeaseOutcome, LeaseScope, LifecycleFilter, LifecycleOp, MessageFilter, MessageIncludes, MessageView, NackOptions, NewAttempt, NewMessage, Selector } from "../records.js";
import type { AgingSummaryReport, BacklogState, OldestQueuedReport, PruneReport, QueueStats, TopQueuedReport, TrendsReport, TrendsRequest } from "../reports.js";
import { StoreError, type ReadyListener, type Store } from "../store.js";
import { validateDequeue, validateEnqueueBatch } from "../validate.js";
import * as analytics from "./analytics.js";
import * as attempts from "./attempts.js";
import { connectPostgres, measureClockSkewMs, openDeferredPool, postgresStoreError, startupStoreError, type Sql } from "./connect.js";
import { readyChannel, type PgContext } from "./context.js";
import { EnqueueWriter } from "./enqueue.js";
import { LeaseOps } from "./leases.js";
import * as lifecycle from "./lifecycle.js";
import * as messages from "./messages.js";
import { prune } from "./retention.js";
import { WakeListener } from "./wake-listener.js";

export interface PostgresStoreDeps {
  dsn: string;
  schema: string;
  poolSize: number;
  clock: Clock;
  observer: StoreObserver;
  limits: StoreLimits;
  /**
   * The trend capture interval of every instance sharing the schema (StoreSchedule). With it, a
   * capture finding another instance's sample younger than half of it records none of its own.
   */
  trendSampleIntervalMs?: number;
  /** Told, once at open, when the server's clock differs from `clock` by more than CLOCK_SKEW_WARN_MS. */
  onClockSkew?: (skewMs: number) => void;
}

/**
 * Hosts kept by NTP agree within milliseconds; past this, leases and wake-ups between instances
 * are off by as much (README "Decisions"), which an operator should hear about at the start.
 */
export const CLOCK_SKEW_WARN_MS = 250;

export class PostgresStore implements Store {
  readonly backend = "postgres" as const;
  private readonly cx: PgContext;
  private readonly ready: ReadySignal;
  private readonly enqueues: EnqueueWriter;
  private readonly leases: LeaseOps;
  private wakeups: WakeListener | null = null;
  private closed = false;

  private constructor(
    private readonly sql: Sql,
    private readonly deferredSql: Sql,
    private readonly deps: PostgresStoreDeps,
  ) {
    this.ready = new ReadySignal(deps.clock);
    this.cx = {
      sql,
      deferredSql,
      clock: deps.clock,
      limits: deps.limits,
      ready: this.ready,
      channel: readyChannel(deps.schema),
      expireLeases: (nowMs) => this.leases.expireLeases(nowMs),
    };
    this.leases = new LeaseOps(this.cx);
    this.enqueues = new EnqueueWriter(this.cx, deps.schema, () => this.assertOpen(), deps.observer);
  }

  static async open(deps: PostgresStoreDeps): Promise<PostgresStore> {
    const sql = await connectPostgres({ dsn: deps.dsn, schema: deps.schema, poolSize: deps.poolSize, nowMs: deps.clock.now() });
    if (deps.onClockSkew) {
      // Advice only: a failed measurement does not keep the store from opening.
      const skewMs = await measureClockSkewMs(sql, () => deps.clock.now()).catch(() => 0);
      if (Math.abs(skewMs) > CLOCK_SKEW_WARN_MS) deps.onClockSkew(skewMs);
    }
    const store = new PostgresStore(sql, openDeferredPool(deps), deps);
    try {
      store.wakeups = await WakeListener.start({
        dsn: deps.dsn,
        schema: deps.schema,
        channel: store.cx.channel,
        onRoute: (route) => store.ready.notify(route),
        onResumed: () => store.ready.notify(),
      });
    } catch (error) {
      await Promise.all([sql.end({ timeout: 1 }), store.deferredSql.end({ timeout: 1 })]).catch(() => {});
      throw startupStoreError(error, "cannot LISTEN for wake-ups");
    }
    return store;
  }

  onReady(listener: ReadyListener): () => void {
    return this.ready.subscribe(listener);
  }

  enqueue(items: readonly NewMessage[]): Promise<void> {
    return observed(this.deps.observer, "enqueue", async () => {
      this.assertOpen();
      validateEnqueueBatch(items);
      if (items.length === 0) return;
      await this.enqueues.submit(items);
    });
  }

  async dequeue(request: DequeueRequest, signal?: AbortSignal): Promise<LeasedMessage[]> {
    validateDequeue(request);
    const attempt = () => this.run("dequeue", () => this.leases.leaseReady(request, signal));
    if (!request.maxWaitMs) return attempt();
    return longPoll({ route: request.route, maxWaitMs: request.maxWaitMs, signal, clock: this.deps.clock, ready: this.ready }, attempt);
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
    return this.run("capture_trend_sample", () => analytics.captureTrendSample(this.cx, this.deps.schema, this.deps.trendSampleIntervalMs));
  }

  trends(request: TrendsRequest): Promise<TrendsReport> {
    return this.run("backlog_trends", () => analytics.trends(this.cx, request));
  }

  prune(): Promise<PruneReport> {
    return this.run("prune", () => prune(this.cx, () => this.assertOpen()));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.closed = true;
    this.ready.close();
    await this.wakeups?.close();
    await Promise.all([this.sql.end({ timeout: 5 }), this.deferredSql.end({ timeout: 5 })]);
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError("closed", "the store is closed");
  }

  private run<T>(operation: string, work: () => Promise<T>): Promise<T> {
    return observed(this.deps.observer, operation, async () => {
      this.assertOpen();
      try {
        return await work();
      } catch (error) {
        throw postgresStoreError(error, operation);
      }
    });
  }
}
