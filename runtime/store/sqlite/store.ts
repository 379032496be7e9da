// The SQLite backend (the embedded default): one connection owned by this process, WAL with
// synchronous=FULL, statements prepared once. This file is the Store facade and its write side on
// the hot paths (enqueue, dequeue, ack, nack, extend, attempts), all of which join the connection's
// group commit (connection.ts); reads, operator repairs and retention live in reads.ts,
// lifecycle.ts and retention.ts.
import { randomBytes } from "node:crypto";
import type { Clock } from "../../clock.js";
import { observed, type StoreObserver } from "../observer.js";
import { positiveOrNull, type StoreLimits } from "../options.js";
import { longPoll, ReadySignal } from "../ready-signal.js";
import { SettledLeases, type SettleKind } from "../settled-leases.js";
import type { AttemptFilter, AttemptRecord, DequeueRequest, FilterOutcome, LeasedMessage, LeaseOutcome, LeaseScope, LifecycleFilter, LifecycleOp, MessageFilter, MessageIncludes, MessageView, NackOptions, NewAttempt, NewMessage, Selector } from "../records.js";
import type { AgingSummaryReport, BacklogState, OldestQueuedReport, PruneReport, QueueStats, TopQueuedReport, TrendsReport, TrendsRequest } from "../reports.js";
import { StoreError, type ReadyListener, type Store } from "../store.js";
import { uniqueIds, validateDequeue, validateEnqueueBatch } from "../validate.js";
import { SqliteConnection, type AfterCommit, type Durability, type WriteShape } from "./connection.js";
import { SqliteLifecycle } from "./lifecycle.js";
import { sqliteStoreError } from "./open-db.js";
import type { LeasedRow, LeaseLookupRow, ReadyKey, SqliteStatements } from "./queries.js";
import { SqliteReads } from "./reads.js";
import { SqliteRetention } from "./retention.js";

/**
 * drop_policy drop_oldest: the oldest queued messages, as lists order them, through an index of the
 * queued messages alone that the store keeps only while drop_oldest is configured (the constructor
 * creates or drops it): messages_received holds every state, and walking the delivered, dead and
 * leased entries older than the oldest queued one took milliseconds per enqueue on the event loop
 * (12 ms past 50,000 dead messages); an index every queue paid for would cost every enqueue and
 * lease one more b-tree write.
 */
const QUEUED_RECEIVED_INDEX = "messages_queued_received";
const DROP_OLDEST_QUEUED = `DELETE FROM messages WHERE rowid IN (SELECT rowid FROM messages INDEXED BY ${QUEUED_RECEIVED_INDEX} WHERE state = 'queued' ORDER BY received_at, id LIMIT ?)`;

export interface SqliteStoreDeps {
  path: string;
  busyTimeoutMs: number;
  clock: Clock;
  observer: StoreObserver;
  limits: StoreLimits;
}

export class SqliteStore implements Store {
  readonly backend = "sqlite" as const;
  private readonly conn: SqliteConnection;
  private readonly sql: SqliteStatements;
  private readonly ready: ReadySignal;
  private readonly settled = new SettledLeases();
  private readonly reads: SqliteReads;
  private readonly lifecycle: SqliteLifecycle;
  private readonly retention: SqliteRetention;
  private readonly clock: Clock;
  private readonly observer: StoreObserver;
  private readonly limits: StoreLimits;

  constructor(deps: SqliteStoreDeps) {
    this.clock = deps.clock;
    this.observer = deps.observer;
    this.limits = deps.limits;
    this.conn = new SqliteConnection(deps.path, deps.busyTimeoutMs, deps.clock, deps.observer);
    this.sql = this.conn.sql;
    this.conn.db.exec(
      deps.limits.dropOldest
        ? `CREATE INDEX IF NOT EXISTS ${QUEUED_RECEIVED_INDEX} ON messages(received_at, id) WHERE state = 'queued'`
        : `DROP INDEX IF EXISTS ${QUEUED_RECEIVED_INDEX}`,
    );
    this.ready = new ReadySignal(deps.clock);
    this.reads = new SqliteReads(this.conn);
    this.lifecycle = new SqliteLifecycle(this.conn, this.ready);
    this.retention = new SqliteRetention(this.conn, deps.limits, () => this.reads.countByState().dead);
  }

  onReady(listener: ReadyListener): () => void {
    return this.ready.subscribe(listener);
  }

  enqueue(items: readonly NewMessage[]): Promise<void> {
    // Not an async arrow: the group's promise is returned as it is, one promise and hop fewer per
    // request; a synchronous throw still becomes observed()'s rejection.
    return observed(this.observer, "enqueue", () => {
      this.conn.assertOpen();
      validateEnqueueBatch(items);
      if (items.length === 0) return Promise.resolve();
      // One message is one INSERT, and a refusal (queue_full) comes before it: stepwise, unless
      // drop_oldest may remove messages before the refusal or the INSERT.
      return this.conn.groupedEnqueue((afterCommit) => {
        const nowMs = this.clock.now();
        const dropped = this.insertBatch(items, nowMs);
        afterCommit(() => {
          this.ready.notifyStored(items, nowMs);
          if (dropped > 0) this.observer.dropped(dropped);
        });
      }, items.length === 1 && !this.limits.dropOldest ? "stepwise" : "atomic");
    });
  }

  /**
   * Inserts one caller's batch; a refusal throws, and the caller's savepoint (for one message: the
   * failed INSERT's own statement rollback) undoes what was inserted, and what drop_oldest removed.
   * The inserted messages reach queue_counters through the connection's per-group count, not a
   * trigger (schema 4). Returns how many queued messages were removed to make room.
   */
  private insertBatch(items: readonly NewMessage[], nowMs: number): number {
    const maxDepth = positiveOrNull(this.limits.maxDepth);
    let dropped = 0;
    if (maxDepth !== null) {
      const active = this.conn.activeDepth();
      const over = active + items.length - maxDepth;
      if (over > 0 && this.limits.dropOldest) dropped = this.dropOldestQueued(over, items);
      if (over > dropped) {
        throw new StoreError("queue_full", `queue depth ${active} + ${items.length} would exceed max_depth ${maxDepth}`);
      }
    }
    items.forEach((item, index) => {
      try {
        this.sql.insert.run(
          item.id,
          item.route,
          item.target,
          item.receivedAtMs ?? nowMs,
          item.nextRunAtMs ?? nowMs,
          item.payload,
          JSON.stringify(item.headers),
          item.trace ? JSON.stringify(item.trace) : null,
        );
      } catch (error) {
        const code = (error as { code?: string }).code ?? "";
        if (code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "SQLITE_CONSTRAINT_UNIQUE") {
          throw new StoreError("duplicate_id", `message id ${item.id} already exists`, index);
        }
        throw error;
      }
    });
    this.conn.countInserted(items.length);
    return dropped;
  }

  /**
   * Removes up to `count` of the oldest queued messages (drop_policy drop_oldest) to make room for
   * `items`; returns how many. A batch naming a stored message is refused duplicate_id first: the
   * message it names could otherwise be the one removed, and silently replaced.
   */
  private dropOldestQueued(count: number, items: readonly NewMessage[]): number {
    const ids = JSON.stringify(items.map((item) => item.id));
    const taken = this.conn.dynamic.get("SELECT id FROM messages WHERE id IN (SELECT value FROM json_each(?)) LIMIT 1").pluck().get(ids) as string | undefined;
    if (taken !== undefined) throw new StoreError("duplicate_id", `message id ${taken} already exists`, items.findIndex((item) => item.id === taken));
    const dropped = this.conn.dynamic.get(DROP_OLDEST_QUEUED).run(count).changes;
    // The delete trigger lowered queue_counters.active.
    this.conn.forgetActiveDepth();
    return dropped;
  }

  async dequeue(request: DequeueRequest, signal?: AbortSignal): Promise<LeasedMessage[]> {
    validateDequeue(request);
    const attempt = () => this.runGrouped("dequeue", () => this.leaseReady(request), "durable", "stepwise");
    if (!request.maxWaitMs) return attempt();
    return longPoll({ route: request.route, maxWaitMs: request.maxWaitMs, signal, clock: this.clock, ready: this.ready }, attempt);
  }

  /**
   * Stepwise (WriteShape): the lease sweep stands on its own, and after the lease UPDATE only reads
   * of the rows it wrote follow (a read that fails on I/O ends the whole transaction).
   */
  private leaseReady(request: DequeueRequest): LeasedMessage[] {
    const nowMs = this.clock.now();
    const leaseUntilMs = nowMs + request.leaseTtlMs;
    this.sql.expireLeases.run(nowMs);
    const ready = this.nextReady(request, nowMs);
    if (ready.length === 0) return [];
    const rowids = JSON.stringify(ready.map((key) => key[0]));
    this.sql.leaseByRowid.run(leaseUntilMs, leaseUntilMs, rowids);
    const leased = this.sql.leasedRows.all(rowids) as LeasedRow[];
    if (leased.length === 0) return [];
    const byRowid = new Map(leased.map((row) => [row[0], row]));
    this.ready.notifyAt(leaseUntilMs);
    return ready.map(([rowid, id, , receivedAt, target]) => {
      const [, leaseId, payload, headers, trace, attempt] = byRowid.get(rowid)!;
      return {
        id,
        leaseId,
        route: request.route,
        target,
        payload,
        headers: JSON.parse(headers),
        trace: trace === null ? null : JSON.parse(trace),
        receivedAtMs: receivedAt,
        attempt,
        leaseUntilMs,
      };
    });
  }

  /**
   * The next `batch` ready rows in dequeue order (next_run_at, received_at, id). Without a target,
   * the route's targets are found by a skip-scan and each contributes its own first `batch`, so the
   * work is O(batch × targets) at any depth; the merge keeps the order across targets.
   */
  private nextReady(request: DequeueRequest, nowMs: number): [...ReadyKey, string][] {
    const keysOf = (target: string) =>
      (this.sql.readyKeys.all({ route: request.route, target, now: nowMs, batch: request.batch }) as ReadyKey[]).map(
        (key): [...ReadyKey, string] => [...key, target],
      );
    const targets = request.target === undefined ? (this.sql.readyTargets.all({ route: request.route }) as string[]) : [request.target];
    if (targets.length === 1) return keysOf(targets[0]);
    return targets.flatMap(keysOf).sort(compareReadyKeys).slice(0, request.batch);
  }

  ack(leaseIds: readonly string[], scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.runGrouped("ack", () => {
      if (positiveOrNull(this.limits.deliveredRetentionMs) !== null) {
        return this.settleLeases(leaseIds, scope, "ack", (ids, nowMs) => void this.sql.deliverByIds.run(nowMs, JSON.stringify(ids)));
      }
      const ids = uniqueIds(leaseIds, "lease");
      if (ids.length === 0) return { settled: [], conflicts: [] };
      const nowMs = this.clock.now();
      const route = scope?.route ?? null;
      const deleted = this.sql.ackDelete.all(JSON.stringify(ids), nowMs, route, route) as string[];
      for (const leaseId of deleted) this.settled.remember(leaseId, "ack", nowMs, scope?.route);
      if (deleted.length === ids.length) return { settled: ids, conflicts: [] };
      const done = new Set(deleted);
      const rest = this.settleLeases(ids.filter((id) => !done.has(id)), scope, "ack", () => {});
      const settled = new Set([...deleted, ...rest.settled]);
      return { settled: ids.filter((id) => settled.has(id)), conflicts: rest.conflicts, ...(rest.repeated ? { repeated: rest.repeated } : {}) };
    }, "deferred", "stepwise");
  }

  nack(leaseIds: readonly string[], how: NackOptions, scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.runGrouped("nack", () => {
      const nowMs = this.clock.now();
      const routes = new Set<string>();
      const outcome = this.settleLeases(leaseIds, scope, how.dead ? "dead" : "nack", (ids, _now, rows) => {
        if (how.dead) return void this.sql.killLeased.run(nowMs, how.reason ? how.reason : null, JSON.stringify(ids));
        this.sql.requeueLeased.run(nowMs + Math.max(0, how.delayMs), JSON.stringify(ids));
        for (const row of rows) routes.add(row.route);
      });
      if (!how.dead && how.delayMs > 0 && routes.size > 0) this.ready.notifyAt(nowMs + how.delayMs);
      for (const route of routes) this.ready.notify(route);
      return outcome;
    }, "deferred", "stepwise");
  }

  extend(leaseIds: readonly string[], leaseTtlMs: number, scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.runGrouped("extend", () => {
      if (!(leaseTtlMs > 0)) throw new StoreError("invalid_argument", `lease ttl must be positive, got ${leaseTtlMs}`);
      const nowMs = this.clock.now();
      const outcome = this.settleLeases(leaseIds, scope, null, (ids) => void this.sql.extendLeases.run(nowMs + leaseTtlMs, nowMs + leaseTtlMs, JSON.stringify(ids)));
      if (outcome.settled.length > 0) this.ready.notifyAt(nowMs + leaseTtlMs);
      return outcome;
    }, "durable", "stepwise");
  }

  /**
   * Looks the leases up, applies `apply` to the valid ones in the same transaction and reports the
   * rest. An expired lease found on the way is returned to queued at once. Stepwise (WriteShape):
   * the sweep of expired leases (which never touches a valid one) runs first, and `apply` is one
   * statement, remembered once it has run.
   */
  private settleLeases(
    leaseIds: readonly string[],
    scope: LeaseScope | undefined,
    kind: SettleKind | null,
    apply: (rowids: number[], nowMs: number, rows: LeaseLookupRow[]) => void,
  ): LeaseOutcome {
    const ids = uniqueIds(leaseIds, "lease");
    const nowMs = this.clock.now();
    const outcome: LeaseOutcome = { settled: [], conflicts: [] };
    if (ids.length === 0) return outcome;
    const found = new Map((this.sql.lookupLeases.all(JSON.stringify(ids)) as LeaseLookupRow[]).map((row) => [row.lease_id, row]));
    const valid: LeaseLookupRow[] = [];
    let sawExpired = false;
    for (const leaseId of ids) {
      const row = found.get(leaseId);
      // A queued row still holding this lease id is one whose lease ran out and was swept.
      const inScope = row !== undefined && (row.state === "leased" || row.state === "queued") && (scope?.route === undefined || row.route === scope.route);
      if (row && inScope && row.state === "leased" && row.lease_until > nowMs) {
        valid.push(row);
        outcome.settled.push(leaseId);
      } else if (kind && this.settled.lookup(leaseId, nowMs, scope?.route) === kind) {
        outcome.settled.push(leaseId);
        (outcome.repeated ??= []).push(leaseId);
      } else if (row && inScope) {
        sawExpired = true;
        outcome.conflicts.push({ leaseId, reason: "lease_expired" });
      } else {
        outcome.conflicts.push({ leaseId, reason: "lease_not_found" });
      }
    }
    if (sawExpired) this.sql.expireLeases.run(nowMs);
    if (valid.length > 0) apply(valid.map((row) => row.rowid), nowMs, valid);
    if (kind) for (const row of valid) this.settled.remember(row.lease_id, kind, nowMs, row.route);
    return outcome;
  }

  recordAttempts(attempts: readonly NewAttempt[]): Promise<void> {
    return this.runGrouped("record_attempts", () => {
      const nowMs = this.clock.now();
      for (const a of attempts) {
        this.sql.insertAttempt.run(
          "att_" + randomBytes(8).toString("hex"),
          a.messageId,
          a.route,
          a.target,
          a.attempt,
          a.statusCode ?? null,
          a.error ?? null,
          a.outcome,
          a.deadReason ?? null,
          nowMs,
        );
      }
    }, "deferred", attempts.length <= 1 ? "stepwise" : "atomic");
  }

  listAttempts(filter: AttemptFilter): Promise<AttemptRecord[]> {
    return this.run("list_attempts", () => this.reads.listAttempts(filter));
  }

  listMessages(filter: MessageFilter): Promise<MessageView[]> {
    return this.run("list_messages", () => this.reads.listMessages(filter));
  }

  getMessages(ids: readonly string[], include: MessageIncludes = {}): Promise<MessageView[]> {
    return this.run("get_messages", () => this.reads.getMessages(ids, include));
  }

  queueStats(): Promise<QueueStats> {
    return this.run("queue_stats", () => this.reads.queueStats());
  }

  topQueued(selector: Selector, limit: number): Promise<TopQueuedReport> {
    return this.run("backlog_top_queued", () => this.reads.topQueued(selector, limit));
  }

  oldestQueued(selector: Selector, limit: number): Promise<OldestQueuedReport> {
    return this.run("backlog_oldest_queued", () => this.reads.oldestQueued(selector, limit));
  }

  agingSummary(selector: Selector, states: readonly BacklogState[], limit: number): Promise<AgingSummaryReport> {
    return this.run("backlog_aging_summary", () => this.reads.agingSummary(selector, states, limit));
  }

  trends(request: TrendsRequest): Promise<TrendsReport> {
    return this.run("backlog_trends", () => this.reads.trends(request));
  }

  changeByIds(op: LifecycleOp, ids: readonly string[]): Promise<number> {
    return this.run(op, () => this.lifecycle.changeByIds(op, ids));
  }

  changeByFilter(op: LifecycleOp, filter: LifecycleFilter): Promise<FilterOutcome> {
    return this.run(`${op}_by_filter`, () => this.lifecycle.changeByFilter(op, filter));
  }

  deleteDead(ids: readonly string[]): Promise<number> {
    return this.run("dlq_delete", () => this.lifecycle.deleteDead(ids));
  }

  captureTrendSample(): Promise<number> {
    return this.run("capture_trend_sample", () => this.retention.captureTrendSample());
  }

  prune(): Promise<PruneReport> {
    return observed(this.observer, "prune", async () => {
      this.conn.assertOpen();
      return this.retention.prune();
    });
  }

  async close(): Promise<void> {
    this.ready.close();
    await this.conn.close();
  }

  /** A hot-path write: joins the connection's next group commit. */
  private runGrouped<T>(operation: string, work: (afterCommit: AfterCommit) => T, durability: Durability = "durable", shape: WriteShape = "atomic"): Promise<T> {
    return observed(this.observer, operation, async () => {
      this.conn.assertOpen();
      return this.conn.grouped(work, durability, shape);
    });
  }

  private run<T>(operation: string, work: () => T): Promise<T> {
    return observed(this.observer, operation, async () => {
      this.conn.assertOpen();
      try {
        return work();
      } catch (error) {
        throw sqliteStoreError(error, operation);
      }
    });
  }
}

/** Dequeue order; ids compare as SQLite compares TEXT (UTF-8 bytes), which JS string order is not. */
function compareReadyKeys(a: readonly [...ReadyKey, string], b: readonly [...ReadyKey, string]): number {
  return a[2] - b[2] || a[3] - b[3] || Buffer.compare(Buffer.from(a[1]), Buffer.from(b[1]));
}
