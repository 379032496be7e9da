// The SQLite backend (the embedded default): one connection owned by this process, WAL with
// synchronous=FULL, statements prepared once, and group commit for enqueue. better-sqlite3 is
// synchronous, so every transaction runs to completion without interleaving; the event loop only
// ever sees committed state.
import { randomBytes } from "node:crypto";
import type { Clock } from "../../clock.js";
import { activeTotal, matchesSelector, queueStatsFrom, rollupTrends, summarizeAging, topQueuedReport, type BacklogRow } from "../backlog.js";
import { GroupCommitter, type PendingWrite } from "../group-commit.js";
import { observed, type StoreObserver } from "../observer.js";
import { positiveOrNull, type StoreLimits } from "../options.js";
import { longPoll, ReadySignal } from "../ready-signal.js";
import { SettledLeases, type SettleKind } from "../settled-leases.js";
import {
  AGING_SCAN_LIMIT,
  MESSAGE_STATES,
  StoreError,
  type AgingSummaryReport,
  type AttemptFilter,
  type AttemptRecord,
  type BacklogState,
  type DequeueRequest,
  type FilterOutcome,
  type LeasedMessage,
  type LeaseOutcome,
  type LeaseScope,
  type LifecycleFilter,
  type LifecycleOp,
  type MessageFilter,
  type MessageState,
  type MessageView,
  type NackOptions,
  type NewAttempt,
  type NewMessage,
  type OldestQueuedReport,
  type PruneReport,
  type QueuedBucket,
  type QueueStats,
  type ReadyListener,
  type Selector,
  type Store,
  type TopQueuedReport,
  type TrendsReport,
  type TrendsRequest,
} from "../store.js";
import { lifecycleStates, uniqueIds, validateDequeue, validateEnqueueBatch, validateLimit } from "../validate.js";
import { openSqliteDb, sqliteStoreError, type SqliteDb } from "./open-db.js";
import {
  MESSAGE_COLUMNS,
  prepareStatements,
  selectorWhere,
  StatementCache,
  statesWhere,
  type LeasedRow,
  type LeaseLookupRow,
  type MessageRow,
  type SqliteStatements,
} from "./queries.js";

/** Rows one prune statement deletes, so a large prune never holds the writer for long. */
const PRUNE_CHUNK = 1000;

export interface SqliteStoreDeps {
  path: string;
  busyTimeoutMs: number;
  clock: Clock;
  observer: StoreObserver;
  limits: StoreLimits;
}

export class SqliteStore implements Store {
  readonly backend = "sqlite" as const;
  private readonly db: SqliteDb;
  private readonly sql: SqliteStatements;
  private readonly dynamic: StatementCache;
  private readonly ready: ReadySignal;
  private readonly settled = new SettledLeases();
  private readonly enqueues: GroupCommitter<readonly NewMessage[]>;
  private readonly clock: Clock;
  private readonly observer: StoreObserver;
  private readonly limits: StoreLimits;
  private closed = false;

  constructor(deps: SqliteStoreDeps) {
    this.clock = deps.clock;
    this.observer = deps.observer;
    this.limits = deps.limits;
    this.db = openSqliteDb(deps.path, deps.busyTimeoutMs, deps.clock.now());
    this.sql = prepareStatements(this.db);
    this.dynamic = new StatementCache(this.db);
    this.ready = new ReadySignal(deps.clock);
    this.enqueues = new GroupCommitter((writes) => this.writeEnqueueGroup(writes));
  }

  onReady(listener: ReadyListener): () => void {
    return this.ready.subscribe(listener);
  }

  enqueue(items: readonly NewMessage[]): Promise<void> {
    return observed(this.observer, "enqueue", async () => {
      this.assertOpen();
      validateEnqueueBatch(items);
      if (items.length === 0) return;
      await this.enqueues.submit(items);
    });
  }

  /** One transaction for the whole group; each caller's batch under its own SAVEPOINT. */
  private async writeEnqueueGroup(writes: readonly PendingWrite<readonly NewMessage[]>[]): Promise<(unknown | undefined)[]> {
    if (this.closed) throw new StoreError("closed", "the store is closed");
    const nowMs = this.clock.now();
    const maxDepth = positiveOrNull(this.limits.maxDepth);
    const errors: (unknown | undefined)[] = [];
    const started = performance.now();
    try {
      this.db.exec("BEGIN IMMEDIATE");
    } catch (error) {
      if (((error as { code?: string }).code ?? "").startsWith("SQLITE_BUSY")) this.observer.sqliteEvent("busy");
      throw sqliteStoreError(error, "enqueue");
    }
    try {
      for (const write of writes) {
        this.db.exec("SAVEPOINT enqueue_batch");
        try {
          const items = write.items;
          if (maxDepth !== null) {
            const active = this.sql.activeDepth.get() as number;
            if (active + items.length > maxDepth) {
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
          this.db.exec("RELEASE enqueue_batch");
          errors.push(undefined);
        } catch (error) {
          this.db.exec("ROLLBACK TO enqueue_batch");
          this.db.exec("RELEASE enqueue_batch");
          errors.push(error instanceof StoreError ? error : sqliteStoreError(error, "enqueue"));
        }
      }
      this.db.exec("COMMIT");
      this.observer.sqliteEvent("tx_commit", (performance.now() - started) / 1000);
    } catch (error) {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      this.observer.sqliteEvent("tx_rollback");
      throw sqliteStoreError(error, "enqueue");
    }
    this.ready.notifyStored(writes.filter((_, i) => errors[i] === undefined).flatMap((write) => write.items), nowMs);
    return errors;
  }

  async dequeue(request: DequeueRequest, signal?: AbortSignal): Promise<LeasedMessage[]> {
    validateDequeue(request);
    const attempt = () => this.run("dequeue", () => this.leaseReady(request));
    if (!request.maxWaitMs) return attempt();
    return longPoll({ route: request.route, maxWaitMs: request.maxWaitMs, signal, clock: this.clock, ready: this.ready }, attempt);
  }

  private leaseReady(request: DequeueRequest): LeasedMessage[] {
    const nowMs = this.clock.now();
    const leaseUntilMs = nowMs + request.leaseTtlMs;
    const rows = this.write(() => {
      this.sql.expireLeases.run(nowMs);
      const params = { route: request.route, now: nowMs, batch: request.batch };
      const ids = (
        request.target === undefined
          ? this.sql.readyIds.all(params)
          : this.sql.readyIdsForTarget.all({ ...params, target: request.target })
      ) as string[];
      if (ids.length === 0) return { ids, leased: [] as LeasedRow[] };
      return { ids, leased: this.sql.leaseIds.all(leaseUntilMs, leaseUntilMs, JSON.stringify(ids)) as LeasedRow[] };
    });
    if (rows.leased.length === 0) return [];
    const byId = new Map(rows.leased.map((row) => [row.id, row]));
    this.ready.notifyAt(leaseUntilMs);
    return rows.ids.map((id) => byId.get(id)!).map((row) => ({
      id: row.id,
      leaseId: row.lease_id,
      route: row.route,
      target: row.target,
      payload: row.payload,
      headers: JSON.parse(row.headers),
      trace: row.trace === null ? null : JSON.parse(row.trace),
      receivedAtMs: row.received_at,
      attempt: row.attempt,
      leaseUntilMs,
    }));
  }

  ack(leaseIds: readonly string[], scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.run("ack", () => {
      if (positiveOrNull(this.limits.deliveredRetentionMs) !== null) {
        return this.settleLeases(leaseIds, scope, "ack", (ids, nowMs) => void this.sql.deliverByIds.run(nowMs, JSON.stringify(ids)));
      }
      const ids = uniqueIds(leaseIds, "lease");
      if (ids.length === 0) return { settled: [], conflicts: [] };
      const nowMs = this.clock.now();
      const route = scope?.route ?? null;
      const deleted = this.write(() => this.sql.ackDelete.all(JSON.stringify(ids), nowMs, route, route) as string[]);
      for (const leaseId of deleted) this.settled.remember(leaseId, "ack", nowMs);
      if (deleted.length === ids.length) return { settled: ids, conflicts: [] };
      const done = new Set(deleted);
      const rest = this.settleLeases(ids.filter((id) => !done.has(id)), scope, "ack", () => {});
      const settled = new Set([...deleted, ...rest.settled]);
      return { settled: ids.filter((id) => settled.has(id)), conflicts: rest.conflicts };
    });
  }

  nack(leaseIds: readonly string[], how: NackOptions, scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.run("nack", () => {
      const nowMs = this.clock.now();
      const routes = new Set<string>();
      const outcome = this.settleLeases(leaseIds, scope, "nack", (ids, _now, rows) => {
        if (how.dead) return void this.sql.killLeased.run(nowMs, how.reason ? how.reason : null, JSON.stringify(ids));
        this.sql.requeueLeased.run(nowMs + Math.max(0, how.delayMs), JSON.stringify(ids));
        for (const row of rows) routes.add(row.route);
      });
      if (!how.dead && how.delayMs > 0 && routes.size > 0) this.ready.notifyAt(nowMs + how.delayMs);
      for (const route of routes) this.ready.notify(route);
      return outcome;
    });
  }

  extend(leaseIds: readonly string[], leaseTtlMs: number, scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.run("extend", () => {
      if (!(leaseTtlMs > 0)) throw new StoreError("invalid_argument", `lease ttl must be positive, got ${leaseTtlMs}`);
      const nowMs = this.clock.now();
      const outcome = this.settleLeases(leaseIds, scope, null, (ids) => void this.sql.extendLeases.run(nowMs + leaseTtlMs, nowMs + leaseTtlMs, JSON.stringify(ids)));
      if (outcome.settled.length > 0) this.ready.notifyAt(nowMs + leaseTtlMs);
      return outcome;
    });
  }

  /**
   * Looks the leases up, applies `apply` to the valid ones in the same transaction and reports the
   * rest. An expired lease found on the way is returned to queued at once.
   */
  private settleLeases(
    leaseIds: readonly string[],
    scope: LeaseScope | undefined,
    kind: SettleKind | null,
    apply: (messageIds: string[], nowMs: number, rows: LeaseLookupRow[]) => void,
  ): LeaseOutcome {
    const ids = uniqueIds(leaseIds, "lease");
    const nowMs = this.clock.now();
    const outcome: LeaseOutcome = { settled: [], conflicts: [] };
    if (ids.length === 0) return outcome;
    this.write(() => {
      const found = new Map((this.sql.lookupLeases.all(JSON.stringify(ids)) as LeaseLookupRow[]).map((row) => [row.lease_id, row]));
      const valid: LeaseLookupRow[] = [];
      let sawExpired = false;
      for (const leaseId of ids) {
        const row = found.get(leaseId);
        const inScope = row !== undefined && row.state === "leased" && (scope?.route === undefined || row.route === scope.route);
        if (row && inScope && row.lease_until > nowMs) {
          valid.push(row);
          outcome.settled.push(leaseId);
        } else if (kind && this.settled.lookup(leaseId, nowMs) === kind) {
          outcome.settled.push(leaseId);
        } else if (row && inScope) {
          sawExpired = true;
          outcome.conflicts.push({ leaseId, reason: "lease_expired" });
        } else {
          outcome.conflicts.push({ leaseId, reason: "lease_not_found" });
        }
      }
      if (valid.length > 0) apply(valid.map((row) => row.id), nowMs, valid);
      if (sawExpired) this.sql.expireLeases.run(nowMs);
      if (kind) for (const row of valid) this.settled.remember(row.lease_id, kind, nowMs);
    });
    return outcome;
  }

  recordAttempts(attempts: readonly NewAttempt[]): Promise<void> {
    return this.run("record_attempts", () => {
      const nowMs = this.clock.now();
      this.write(() => {
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
      });
    });
  }

  listAttempts(filter: AttemptFilter): Promise<AttemptRecord[]> {
    return this.run("list_attempts", () => {
      validateLimit(filter.limit);
      const conditions: string[] = [];
      const params: unknown[] = [];
      selectorWhere(filter, conditions, params);
      if (filter.messageId !== undefined) conditions.push("message_id = ?"), params.push(filter.messageId);
      if (filter.outcome !== undefined) conditions.push("outcome = ?"), params.push(filter.outcome);
      if (filter.beforeMs !== undefined) conditions.push("created_at < ?"), params.push(filter.beforeMs);
      const where = conditions.length ? `WHERE ${conditions.join(" AND ")}` : "";
      const rows = this.dynamic
        .get(`SELECT * FROM attempts ${where} ORDER BY created_at DESC, seq DESC LIMIT ?`)
        .all(...params, filter.limit) as Record<string, unknown>[];
      return rows.map((row) => ({
        id: row.id as string,
        messageId: row.message_id as string,
        route: row.route as string,
        target: row.target as string,
        attempt: row.attempt as number,
        statusCode: (row.status_code as number | null) ?? null,
        error: (row.error as string | null) ?? null,
        outcome: row.outcome as AttemptRecord["outcome"],
        deadReason: (row.dead_reason as string | null) ?? null,
        createdAtMs: row.created_at as number,
      }));
    });
  }

  listMessages(filter: MessageFilter): Promise<MessageView[]> {
    return this.run("list_messages", () => {
      validateLimit(filter.limit);
      this.expireLeases();
      const conditions: string[] = [];
      const params: unknown[] = [];
      if (filter.state !== undefined) statesWhere([filter.state], conditions);
      selectorWhere(filter, conditions, params);
      if (filter.beforeMs !== undefined) conditions.push("received_at < ?"), params.push(filter.beforeMs);
      const include = { payload: filter.includePayload, headers: filter.includeHeaders, trace: filter.includeTrace };
      const where = conditions.length ? `WHERE ${conditions.join(" AND ")}` : "";
      const rows = this.dynamic
        .get(`SELECT ${columnsFor(include)} FROM messages ${where} ORDER BY received_at DESC, id DESC LIMIT ?`)
        .all(...params, filter.limit) as MessageRow[];
      return rows.map((row) => viewOf(row, include));
    });
  }

  getMessages(ids: readonly string[], include: { payload?: boolean; headers?: boolean; trace?: boolean } = {}): Promise<MessageView[]> {
    return this.run("get_messages", () => {
      const unique = uniqueIds(ids, "message");
      this.expireLeases();
      const rows = this.dynamic
        .get(`SELECT ${columnsFor(include)} FROM messages WHERE id IN (SELECT value FROM json_each(?))`)
        .all(JSON.stringify(unique)) as MessageRow[];
      const byId = new Map(rows.map((row) => [row.id, row]));
      return unique.filter((id) => byId.has(id)).map((id) => viewOf(byId.get(id)!, include));
    });
  }

  changeByIds(op: LifecycleOp, ids: readonly string[]): Promise<number> {
    return this.run(op, () => {
      const unique = uniqueIds(ids, "message");
      const conditions = ["id IN (SELECT value FROM json_each(?))"];
      statesWhere(lifecycleStates(op, {}), conditions, true);
      return this.applyLifecycle(op, conditions, [JSON.stringify(unique)]);
    });
  }

  changeByFilter(op: LifecycleOp, filter: LifecycleFilter): Promise<FilterOutcome> {
    return this.run(`${op}_by_filter`, () => {
      validateLimit(filter.limit);
      const inner: string[] = [];
      const params: unknown[] = [];
      statesWhere(lifecycleStates(op, filter), inner);
      selectorWhere(filter, inner, params);
      if (filter.beforeMs !== undefined) inner.push("received_at < ?"), params.push(filter.beforeMs);
      const select = `SELECT id FROM messages WHERE ${inner.join(" AND ")} ORDER BY received_at, id LIMIT ?`;
      return this.write(() => {
        this.sql.expireLeases.run(this.clock.now());
        const ids = this.dynamic.get(select).pluck().all(...params, filter.limit) as string[];
        if (filter.previewOnly || ids.length === 0) return { matched: ids.length, changed: 0 };
        const conditions = ["id IN (SELECT value FROM json_each(?))"];
        statesWhere(lifecycleStates(op, filter), conditions, true);
        return { matched: ids.length, changed: this.applyLifecycle(op, conditions, [JSON.stringify(ids)]) };
      });
    });
  }

  private applyLifecycle(op: LifecycleOp, conditions: string[], params: unknown[]): number {
    const nowMs = this.clock.now();
    const where = conditions.join(" AND ");
    // Requeue gives a fresh retry budget; resume continues where the message stopped (§2 row 19).
    const set =
      op === "cancel"
        ? "state = 'canceled', lease_id = NULL, lease_until = NULL"
        : `state = 'queued', lease_id = NULL, lease_until = NULL, dead_reason = NULL, next_run_at = ?${op === "resume" ? "" : ", attempt = 0"}`;
    const routes = this.write(() => {
      this.sql.expireLeases.run(nowMs);
      const setParams = op === "cancel" ? [] : [nowMs];
      return this.dynamic.get(`UPDATE messages SET ${set} WHERE ${where} RETURNING route`).pluck().all(...setParams, ...params) as string[];
    });
    if (op !== "cancel") for (const route of new Set(routes)) this.ready.notify(route);
    return routes.length;
  }

  deleteDead(ids: readonly string[]): Promise<number> {
    return this.run("dlq_delete", () => {
      const unique = uniqueIds(ids, "message");
      return this.write(
        () => this.dynamic.get("DELETE FROM messages WHERE id IN (SELECT value FROM json_each(?)) AND +state = 'dead'").run(JSON.stringify(unique)).changes,
      );
    });
  }

  queueStats(): Promise<QueueStats> {
    return this.run("queue_stats", () => {
      const nowMs = this.clock.now();
      this.expireLeases();
      return queueStatsFrom(this.countByState(), this.queuedBuckets({}), this.leasedByRoute(), nowMs);
    });
  }

  private leasedByRoute(): Record<string, number> {
    const rows = this.sql.leasedByRoute.all() as { route: string; n: number }[];
    return Object.fromEntries(rows.map((row) => [row.route, row.n]));
  }

  private countByState(): Record<MessageState, number> {
    const counts = Object.fromEntries(MESSAGE_STATES.map((s) => [s, 0])) as Record<MessageState, number>;
    for (const row of this.sql.countByState.all() as { state: MessageState; n: number }[]) counts[row.state] = row.n;
    return counts;
  }

  private queuedBuckets(selector: Selector): QueuedBucket[] {
    const rows = this.sql.queuedBuckets.all() as { route: string; target: string; queued: number; oldest: number; earliest: number }[];
    return rows
      .filter((row) => matchesSelector(selector, row.route, row.target))
      .map((row) => ({ route: row.route, target: row.target, queued: row.queued, oldestQueuedReceivedAtMs: row.oldest, earliestQueuedNextRunAtMs: row.earliest }));
  }

  topQueued(selector: Selector, limit: number): Promise<TopQueuedReport> {
    return this.run("backlog_top_queued", () => {
      validateLimit(limit);
      this.expireLeases();
      return topQueuedReport(this.countByState(), this.queuedBuckets(selector), limit);
    });
  }

  oldestQueued(selector: Selector, limit: number): Promise<OldestQueuedReport> {
    return this.run("backlog_oldest_queued", () => {
      validateLimit(limit);
      this.expireLeases();
      const conditions = ["state = 'queued'"];
      const params: unknown[] = [];
      selectorWhere(selector, conditions, params);
      const where = conditions.join(" AND ");
      const rows = this.dynamic
        .get(`SELECT id, route, target, received_at, attempt, next_run_at FROM messages WHERE ${where} ORDER BY received_at, id LIMIT ?`)
        .all(...params, limit) as MessageRow[];
      const queuedTotal = this.dynamic.get(`SELECT count(*) FROM messages WHERE ${where}`).pluck().get(...params) as number;
      const byState = this.countByState();
      return {
        queueTotal: activeTotal(byState),
        queuedTotal,
        limit,
        returned: rows.length,
        truncated: queuedTotal > rows.length,
        items: rows.map((row) => ({ id: row.id, route: row.route, target: row.target, receivedAtMs: row.received_at, attempt: row.attempt, nextRunAtMs: row.next_run_at })),
      };
    });
  }

  agingSummary(selector: Selector, states: readonly BacklogState[], limit: number): Promise<AgingSummaryReport> {
    return this.run("backlog_aging_summary", () => {
      validateLimit(limit);
      this.expireLeases();
      const conditions: string[] = [];
      const params: unknown[] = [];
      statesWhere(states, conditions);
      selectorWhere(selector, conditions, params);
      const rows = this.dynamic
        .get(`SELECT route, target, state, received_at, next_run_at FROM messages WHERE ${conditions.join(" AND ")} ORDER BY received_at LIMIT ?`)
        .all(...params, AGING_SCAN_LIMIT + 1) as MessageRow[];
      const byState = this.countByState();
      return summarizeAging({
        rows: rows.slice(0, AGING_SCAN_LIMIT).map(
          (row): BacklogRow => ({ route: row.route, target: row.target, state: row.state as BacklogState, receivedAtMs: row.received_at, nextRunAtMs: row.next_run_at }),
        ),
        nowMs: this.clock.now(),
        states,
        limit,
        queueTotal: activeTotal(byState),
        queuedTotal: byState.queued,
        sourceBounded: rows.length > AGING_SCAN_LIMIT,
      });
    });
  }

  captureTrendSample(): Promise<number> {
    return this.run("capture_trend_sample", () => {
      const nowMs = this.clock.now();
      return this.write(() => {
        this.sql.expireLeases.run(nowMs);
        const rows = this.sql.trendCounts.all() as { route: string; target: string; queued: number; leased: number; dead: number }[];
        // An empty queue still records that a capture happened, so trends can tell "empty" from "stale".
        if (rows.length === 0) rows.push({ route: "", target: "", queued: 0, leased: 0, dead: 0 });
        for (const row of rows) this.sql.insertTrendSample.run(nowMs, row.route, row.target, row.queued, row.leased, row.dead);
        return rows.length;
      });
    });
  }

  trends(request: TrendsRequest): Promise<TrendsReport> {
    return this.run("backlog_trends", () => {
      const rows = this.sql.trendSamples.all(request.untilMs - request.windowMs, request.untilMs) as {
        captured_at: number; route: string; target: string; queued: number; leased: number; dead: number;
      }[];
      return rollupTrends(
        rows.map((r) => ({ capturedAtMs: r.captured_at, route: r.route, target: r.target, queued: r.queued, leased: r.leased, dead: r.dead })),
        request,
      );
    });
  }

  /** Deletes in chunks of PRUNE_CHUNK rows, yielding to the event loop between chunks. */
  prune(): Promise<PruneReport> {
    return observed(this.observer, "prune", async () => {
      this.assertOpen();
      const nowMs = this.clock.now();
      const report: PruneReport = { queued: 0, delivered: 0, dead: 0, attempts: 0, trendSamples: 0 };
      const queueMaxAge = positiveOrNull(this.limits.queueRetentionMs);
      const deliveredMaxAge = positiveOrNull(this.limits.deliveredRetentionMs);
      const dlqMaxAge = positiveOrNull(this.limits.dlqRetentionMs);
      const dlqMaxDepth = positiveOrNull(this.limits.dlqMaxDepth);
      const attemptsMaxAge = positiveOrNull(this.limits.attemptsRetentionMs);
      const attemptsMaxRows = positiveOrNull(this.limits.attemptsMaxRows);
      const trendMaxAge = positiveOrNull(this.limits.trendRetentionMs);
      const chunked = async (sql: string, ...params: unknown[]) => {
        let total = 0;
        for (;;) {
          this.assertOpen();
          const changes = this.write(() => this.dynamic.get(sql).run(...params).changes);
          total += changes;
          if (changes < PRUNE_CHUNK) return total;
          await new Promise((resolve) => setImmediate(resolve));
        }
      };
      const messagesWhere = (where: string) => `DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE ${where} LIMIT ${PRUNE_CHUNK})`;
      this.expireLeases();
      if (queueMaxAge !== null) report.queued = await chunked(messagesWhere("state = 'queued' AND received_at < ?"), nowMs - queueMaxAge);
      // With delivered_retention off nothing should be delivered; anything left over goes at once.
      report.delivered = await chunked(messagesWhere("state = 'delivered' AND next_run_at < ?"), deliveredMaxAge === null ? Number.MAX_SAFE_INTEGER : nowMs - deliveredMaxAge);
      if (dlqMaxAge !== null) report.dead = await chunked(messagesWhere("state = 'dead' AND next_run_at < ?"), nowMs - dlqMaxAge);
      if (dlqMaxDepth !== null) {
        let excess = this.countByState().dead - dlqMaxDepth;
        while (excess > 0) {
          const take = Math.min(excess, PRUNE_CHUNK);
          const sql = `DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE state = 'dead' ORDER BY next_run_at, received_at, id LIMIT ${take})`;
          const changes = this.write(() => this.dynamic.get(sql).run().changes);
          report.dead += changes;
          excess -= take;
          if (changes < take) break;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      const attemptsChunk = (where: string) => `DELETE FROM attempts WHERE seq IN (SELECT seq FROM attempts WHERE ${where} LIMIT ${PRUNE_CHUNK})`;
      if (attemptsMaxAge !== null) report.attempts += await chunked(attemptsChunk("created_at < ?"), nowMs - attemptsMaxAge);
      if (attemptsMaxRows !== null) {
        const rows = this.dynamic.get("SELECT count(*) FROM attempts").pluck().get() as number;
        if (rows > attemptsMaxRows) {
          const cutoff = this.dynamic.get("SELECT seq FROM attempts ORDER BY seq DESC LIMIT 1 OFFSET ?").pluck().get(attemptsMaxRows - 1) as number;
          report.attempts += await chunked(attemptsChunk("seq < ?"), cutoff);
        }
      }
      if (trendMaxAge !== null) {
        report.trendSamples = await chunked(
          `DELETE FROM trend_samples WHERE rowid IN (SELECT rowid FROM trend_samples WHERE captured_at < ? LIMIT ${PRUNE_CHUNK})`,
          nowMs - trendMaxAge,
        );
      }
      this.checkpoint();
      return report;
    });
  }

  /** A passive checkpoint keeps the WAL from growing between automatic checkpoints. */
  private checkpoint(): void {
    const started = performance.now();
    try {
      this.db.pragma("wal_checkpoint(PASSIVE)");
      this.observer.sqliteEvent("checkpoint", (performance.now() - started) / 1000);
    } catch {
      this.observer.sqliteEvent("checkpoint_error");
    }
  }

  memoryStats(): null {
    return null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Let a group that is already queued commit before the connection goes away.
    await new Promise((resolve) => setImmediate(resolve));
    this.closed = true;
    this.ready.close();
    this.db.close();
  }

  private expireLeases(): void {
    const nowMs = this.clock.now();
    this.write(() => this.sql.expireLeases.run(nowMs));
  }

  /** An immediate transaction with commit/rollback/busy reported to the observer. */
  private write<T>(work: () => T): T {
    if (this.db.inTransaction) return work();
    const started = performance.now();
    try {
      const result = this.db.transaction(work).immediate();
      this.observer.sqliteEvent("tx_commit", (performance.now() - started) / 1000);
      return result;
    } catch (error) {
      const code = (error as { code?: string }).code ?? "";
      if (code.startsWith("SQLITE_BUSY")) this.observer.sqliteEvent("busy");
      this.observer.sqliteEvent("tx_rollback");
      throw error;
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError("closed", "the store is closed");
  }

  private run<T>(operation: string, work: () => T): Promise<T> {
    return observed(this.observer, operation, async () => {
      this.assertOpen();
      try {
        return work();
      } catch (error) {
        throw sqliteStoreError(error, operation);
      }
    });
  }
}

function columnsFor(include: { payload?: boolean; headers?: boolean; trace?: boolean }): string {
  return MESSAGE_COLUMNS + (include.payload ? ", payload" : "") + (include.headers ? ", headers" : "") + (include.trace ? ", trace" : "");
}

function viewOf(row: MessageRow, include: { payload?: boolean; headers?: boolean; trace?: boolean }): MessageView {
  const view: MessageView = {
    id: row.id,
    route: row.route,
    target: row.target,
    state: row.state as MessageState,
    receivedAtMs: row.received_at,
    attempt: row.attempt,
    nextRunAtMs: row.next_run_at,
    leaseUntilMs: row.lease_until,
    deadReason: row.dead_reason,
  };
  if (include.payload) view.payload = row.payload;
  if (include.headers) view.headers = JSON.parse(row.headers ?? "{}");
  if (include.trace) view.trace = row.trace ? JSON.parse(row.trace) : null;
  return view;
}
