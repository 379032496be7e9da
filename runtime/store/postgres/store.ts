// The PostgreSQL backend: several Spool processes share one schema. Dequeue locks with
// FOR UPDATE SKIP LOCKED so no message is leased twice; batch admission is exact under an advisory
// lock over a striped depth counter; enqueues group-commit; LISTEN/NOTIFY carries wake-ups between
// instances (with the long poll's 1 s re-check as the fallback).
import { randomBytes } from "node:crypto";
import type { Clock } from "../../clock.js";
import { newLeaseId } from "../../ids.js";
import { activeTotal, matchesSelector, queueStatsFrom, rollupTrends, summarizeAging, topQueuedReport, type BacklogRow } from "../backlog.js";
import { GroupCommitter, type PendingWrite } from "../group-commit.js";
import { observed, type StoreObserver } from "../observer.js";
import { positiveOrNull, type StoreLimits } from "../options.js";
import { longPoll, ReadySignal } from "../ready-signal.js";
import {
  AGING_SCAN_LIMIT,
  MESSAGE_STATES,
  SETTLED_LEASE_MEMORY_MS,
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
import { connectPostgres, postgresStoreError, type Sql } from "./connect.js";
import * as q from "./queries.js";

/** Expired leases are swept at most this often (clock ms) by dequeue; settle paths sweep when they see one. */
const SWEEP_INTERVAL_MS = 100;
const PRUNE_CHUNK = 1000;

type Row = Record<string, any>;

export interface PostgresStoreDeps {
  dsn: string;
  schema: string;
  poolSize: number;
  clock: Clock;
  observer: StoreObserver;
  limits: StoreLimits;
}

export class PostgresStore implements Store {
  readonly backend = "postgres" as const;
  private readonly ready: ReadySignal;
  private readonly enqueues: GroupCommitter<readonly NewMessage[]>;
  private readonly channel: string;
  private readonly admissionLockKey: string;
  private unlisten: (() => Promise<void>) | null = null;
  private lastSweepMs = Number.NEGATIVE_INFINITY;
  private closed = false;

  private constructor(
    private readonly sql: Sql,
    private readonly deps: PostgresStoreDeps,
  ) {
    this.ready = new ReadySignal(deps.clock);
    this.enqueues = new GroupCommitter((writes) => this.writeEnqueueGroup(writes));
    this.channel = ("spool_ready_" + deps.schema).toLowerCase().slice(0, 63);
    this.admissionLockKey = "spool-admission:" + deps.schema;
  }

  static async open(deps: PostgresStoreDeps): Promise<PostgresStore> {
    const sql = await connectPostgres({ dsn: deps.dsn, schema: deps.schema, poolSize: deps.poolSize, nowMs: deps.clock.now() });
    const store = new PostgresStore(sql, deps);
    try {
      const listening = await sql.listen(store.channel, (route) => store.ready.notify(route || undefined));
      store.unlisten = () => listening.unlisten();
    } catch (error) {
      await sql.end({ timeout: 1 }).catch(() => {});
      throw postgresStoreError(error, "cannot LISTEN for wake-ups");
    }
    return store;
  }

  private get clock(): Clock {
    return this.deps.clock;
  }

  private get limits(): StoreLimits {
    return this.deps.limits;
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

  /**
   * One transaction per group. The fast path inserts every caller's messages (and notifies other
   * instances) in one statement. A duplicate id aborts that transaction; the group is then written
   * again with one savepoint per caller, so only the caller with the duplicate fails.
   */
  private async writeEnqueueGroup(writes: readonly PendingWrite<readonly NewMessage[]>[]): Promise<(unknown | undefined)[]> {
    this.assertOpen();
    const nowMs = this.clock.now();
    let errors: (unknown | undefined)[];
    try {
      errors = await this.writeGroupOnce(writes, nowMs, false);
    } catch (error) {
      if ((error as { code?: string }).code !== "23505") throw postgresStoreError(error, "enqueue");
      try {
        errors = await this.writeGroupOnce(writes, nowMs, true);
      } catch (retryError) {
        throw postgresStoreError(retryError, "enqueue");
      }
    }
    this.ready.notifyStored(writes.filter((_, i) => errors[i] === undefined).flatMap((write) => write.items), nowMs);
    return errors;
  }

  private async writeGroupOnce(writes: readonly PendingWrite<readonly NewMessage[]>[], nowMs: number, perCaller: boolean): Promise<(unknown | undefined)[]> {
    const maxDepth = positiveOrNull(this.limits.maxDepth);
    const errors: (unknown | undefined)[] = writes.map(() => undefined);
    await this.sql.begin(async (tx) => {
      let room = Number.POSITIVE_INFINITY;
      if (maxDepth !== null) {
        // Exact admission across instances: enqueuers take turns; acks only ever lower the sum.
        await tx`SELECT pg_advisory_xact_lock(hashtext(${this.admissionLockKey}))`;
        const [{ active }] = await tx`SELECT coalesce(sum(active), 0)::int8 AS active FROM queue_depth`;
        room = maxDepth - active;
      }
      const admitted: number[] = [];
      writes.forEach((write, i) => {
        if (write.items.length > room) {
          errors[i] = new StoreError("queue_full", `queue depth ${maxDepth! - room} + ${write.items.length} would exceed max_depth ${maxDepth}`);
        } else {
          room -= write.items.length;
          admitted.push(i);
        }
      });
      if (admitted.length === 0) return;
      if (!perCaller) {
        await tx.unsafe(q.INSERT_MESSAGES_AND_NOTIFY, [...insertParams(admitted.flatMap((i) => writes[i].items), nowMs), this.channel] as never[], { prepare: true });
        return;
      }
      for (const i of admitted) {
        try {
          await tx.savepoint((sp) => sp.unsafe(q.INSERT_MESSAGES_AND_NOTIFY, [...insertParams(writes[i].items, nowMs), this.channel] as never[], { prepare: true }));
        } catch (itemError) {
          if ((itemError as { code?: string }).code !== "23505") throw itemError;
          errors[i] = duplicateError(itemError, writes[i].items);
        }
      }
    });
    return errors;
  }

  async dequeue(request: DequeueRequest, signal?: AbortSignal): Promise<LeasedMessage[]> {
    validateDequeue(request);
    const attempt = () => this.run("dequeue", () => this.leaseReady(request));
    if (!request.maxWaitMs) return attempt();
    return longPoll({ route: request.route, maxWaitMs: request.maxWaitMs, signal, clock: this.clock, ready: this.ready }, attempt);
  }

  private async leaseReady(request: DequeueRequest): Promise<LeasedMessage[]> {
    const nowMs = this.clock.now();
    if (nowMs - this.lastSweepMs >= SWEEP_INTERVAL_MS || nowMs < this.lastSweepMs) await this.expireLeases(nowMs);
    const leaseUntilMs = nowMs + request.leaseTtlMs;
    const leaseIds = Array.from({ length: request.batch }, newLeaseId);
    const rows: Row[] =
      request.target === undefined
        ? await this.sql.unsafe(q.LEASE_READY, [request.route, nowMs, request.batch, leaseIds, leaseUntilMs], { prepare: true })
        : await this.sql.unsafe(q.LEASE_READY_FOR_TARGET, [request.route, nowMs, request.batch, leaseIds, request.target, leaseUntilMs], { prepare: true });
    if (rows.length === 0) return [];
    this.ready.notifyAt(leaseUntilMs);
    return [...rows]
      .sort((a, b) => a.rn - b.rn)
      .map((row) => ({
        id: row.id,
        leaseId: row.lease_id,
        route: row.route,
        target: row.target,
        payload: row.payload,
        headers: row.headers,
        trace: row.trace ?? null,
        receivedAtMs: row.received_at,
        attempt: row.attempt,
        leaseUntilMs,
      }));
  }

  private async expireLeases(nowMs = this.clock.now()): Promise<void> {
    const rows = await this.sql.unsafe(q.EXPIRE_LEASES + " RETURNING route", [nowMs], { prepare: true });
    this.lastSweepMs = nowMs;
    for (const route of new Set(rows.map((r: Row) => r.route as string))) this.ready.notify(route);
  }

  ack(leaseIds: readonly string[], scope?: LeaseScope): Promise<LeaseOutcome> {
    const sqlText = positiveOrNull(this.limits.deliveredRetentionMs) === null ? q.ACK_DELETE : q.ACK_DELIVER;
    return this.run("ack", () => this.settleLeases(leaseIds, scope, "ack", sqlText, []));
  }

  nack(leaseIds: readonly string[], how: NackOptions, scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.run("nack", async () => {
      const nowMs = this.clock.now();
      if (how.dead) return this.settleLeases(leaseIds, scope, "nack", q.NACK_DEAD, [how.reason ? how.reason : null]);
      const nextRunAtMs = nowMs + Math.max(0, how.delayMs);
      const { outcome, routes } = await this.settleWithRoutes(leaseIds, scope, "nack", q.NACK_REQUEUE, [nextRunAtMs], nowMs);
      if (routes.size > 0) {
        if (nextRunAtMs > nowMs) this.ready.notifyAt(nextRunAtMs);
        else {
          for (const route of routes) this.ready.notify(route);
          await this.sql`SELECT pg_notify(${this.channel}, r) FROM unnest(${[...routes]}::text[]) AS r`;
        }
      }
      return outcome;
    });
  }

  extend(leaseIds: readonly string[], leaseTtlMs: number, scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.run("extend", async () => {
      if (!(leaseTtlMs > 0)) throw new StoreError("invalid_argument", `lease ttl must be positive, got ${leaseTtlMs}`);
      const untilMs = this.clock.now() + leaseTtlMs;
      const outcome = await this.settleLeases(leaseIds, scope, null, q.EXTEND, [untilMs]);
      if (outcome.settled.length > 0) this.ready.notifyAt(untilMs);
      return outcome;
    });
  }

  private async settleLeases(leaseIds: readonly string[], scope: LeaseScope | undefined, kind: "ack" | "nack" | null, sqlText: string, extra: unknown[]): Promise<LeaseOutcome> {
    return (await this.settleWithRoutes(leaseIds, scope, kind, sqlText, extra, this.clock.now())).outcome;
  }

  /**
   * The common path is one statement. Leases it did not change are classified afterwards:
   * remembered as settled the same way (success), still leased but past lease_until (expired, and
   * swept back to queued), or unknown.
   */
  private async settleWithRoutes(
    leaseIds: readonly string[],
    scope: LeaseScope | undefined,
    kind: "ack" | "nack" | null,
    sqlText: string,
    extra: unknown[],
    nowMs: number,
  ): Promise<{ outcome: LeaseOutcome; routes: Set<string> }> {
    const ids = uniqueIds(leaseIds, "lease");
    const outcome: LeaseOutcome = { settled: [], conflicts: [] };
    const routes = new Set<string>();
    if (ids.length === 0) return { outcome, routes };
    const changed: Row[] = await this.sql.unsafe(sqlText, [ids, nowMs, scope?.route ?? null, ...extra] as never[], { prepare: true });
    const done = new Set(changed.map((row) => row.lease_id as string));
    for (const row of changed) routes.add(row.route);
    const leftover = ids.filter((id) => !done.has(id));
    const classified = new Map<string, Row>();
    if (leftover.length > 0) {
      const rows: Row[] = await this.sql.unsafe(q.CLASSIFY_LEASES, [leftover, nowMs - SETTLED_LEASE_MEMORY_MS], { prepare: true });
      for (const row of rows) classified.set(row.lease_id, row);
    }
    let sawExpired = false;
    for (const leaseId of ids) {
      if (done.has(leaseId)) {
        outcome.settled.push(leaseId);
        continue;
      }
      const row = classified.get(leaseId);
      const inScope = row?.state === "leased" && (scope?.route === undefined || row.route === scope.route);
      if (kind && row?.kind === kind) outcome.settled.push(leaseId);
      else if (inScope) {
        sawExpired = true;
        outcome.conflicts.push({ leaseId, reason: "lease_expired" });
      } else outcome.conflicts.push({ leaseId, reason: "lease_not_found" });
    }
    if (sawExpired) await this.expireLeases(nowMs);
    return { outcome, routes };
  }

  recordAttempts(attempts: readonly NewAttempt[]): Promise<void> {
    return this.run("record_attempts", async () => {
      if (attempts.length === 0) return;
      const nowMs = this.clock.now();
      const col = <T>(pick: (a: NewAttempt) => T) => attempts.map(pick);
      await this.sql.unsafe(
        `INSERT INTO attempts (id, message_id, route, target, attempt, status_code, error, outcome, dead_reason, created_at)
         SELECT u.id, u.message_id, u.route, u.target, u.attempt, u.status_code, u.error, u.outcome, u.dead_reason, $10
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int4[], $6::int4[], $7::text[], $8::text[], $9::text[])
           AS u(id, message_id, route, target, attempt, status_code, error, outcome, dead_reason)`,
        [
          col(() => "att_" + randomBytes(8).toString("hex")),
          col((a) => a.messageId),
          col((a) => a.route),
          col((a) => a.target),
          col((a) => a.attempt),
          col((a) => a.statusCode ?? null),
          col((a) => a.error ?? null),
          col((a) => a.outcome),
          col((a) => a.deadReason ?? null),
          nowMs,
        ] as never[],
        { prepare: true },
      );
    });
  }

  listAttempts(filter: AttemptFilter): Promise<AttemptRecord[]> {
    return this.run("list_attempts", async () => {
      validateLimit(filter.limit);
      const where = new q.Where().selector(filter);
      if (filter.messageId !== undefined) where.add(`message_id = ${where.param(filter.messageId)}`);
      if (filter.outcome !== undefined) where.add(`outcome = ${where.param(filter.outcome)}`);
      if (filter.beforeMs !== undefined) where.add(`created_at < ${where.param(filter.beforeMs)}`);
      const limit = where.param(filter.limit);
      const rows: Row[] = await this.sql.unsafe(`SELECT * FROM attempts ${where.sql()} ORDER BY created_at DESC, seq DESC LIMIT ${limit}`, where.params as never[], { prepare: true });
      return rows.map((row) => ({
        id: row.id,
        messageId: row.message_id,
        route: row.route,
        target: row.target,
        attempt: row.attempt,
        statusCode: row.status_code ?? null,
        error: row.error ?? null,
        outcome: row.outcome,
        deadReason: row.dead_reason ?? null,
        createdAtMs: row.created_at,
      }));
    });
  }

  listMessages(filter: MessageFilter): Promise<MessageView[]> {
    return this.run("list_messages", async () => {
      validateLimit(filter.limit);
      await this.expireLeases();
      const where = new q.Where();
      if (filter.state !== undefined) where.states([filter.state]);
      where.selector(filter);
      if (filter.beforeMs !== undefined) where.add(`received_at < ${where.param(filter.beforeMs)}`);
      const include = { payload: filter.includePayload, headers: filter.includeHeaders, trace: filter.includeTrace };
      const limit = where.param(filter.limit);
      const rows: Row[] = await this.sql.unsafe(
        `SELECT ${columnsFor(include)} FROM messages ${where.sql()} ORDER BY received_at DESC, id DESC LIMIT ${limit}`,
        where.params as never[],
        { prepare: true },
      );
      return rows.map((row) => viewOf(row, include));
    });
  }

  getMessages(ids: readonly string[], include: { payload?: boolean; headers?: boolean; trace?: boolean } = {}): Promise<MessageView[]> {
    return this.run("get_messages", async () => {
      const unique = uniqueIds(ids, "message");
      await this.expireLeases();
      const rows: Row[] = await this.sql.unsafe(`SELECT ${columnsFor(include)} FROM messages WHERE id = ANY($1::text[])`, [unique], { prepare: true });
      const byId = new Map(rows.map((row) => [row.id as string, row]));
      return unique.filter((id) => byId.has(id)).map((id) => viewOf(byId.get(id)!, include));
    });
  }

  changeByIds(op: LifecycleOp, ids: readonly string[]): Promise<number> {
    return this.run(op, async () => {
      const unique = uniqueIds(ids, "message");
      await this.expireLeases();
      const where = new q.Where();
      where.add(`id = ANY(${where.param(unique)}::text[])`).states(lifecycleStates(op, {}));
      return this.applyLifecycle(op, where);
    });
  }

  changeByFilter(op: LifecycleOp, filter: LifecycleFilter): Promise<FilterOutcome> {
    return this.run(`${op}_by_filter`, async () => {
      validateLimit(filter.limit);
      const states = lifecycleStates(op, filter);
      await this.expireLeases();
      const where = new q.Where().states(states).selector(filter);
      if (filter.beforeMs !== undefined) where.add(`received_at < ${where.param(filter.beforeMs)}`);
      const limit = where.param(filter.limit);
      const select = `SELECT id FROM messages ${where.sql()} ORDER BY received_at, id LIMIT ${limit}`;
      if (filter.previewOnly) {
        const rows: Row[] = await this.sql.unsafe(select, where.params as never[], { prepare: true });
        return { matched: rows.length, changed: 0 };
      }
      // Lock the selection so a concurrent dequeue or mutation on another instance cannot slip between.
      const lockedWhere = new q.Where();
      lockedWhere.params.push(...where.params);
      lockedWhere.add(`id IN (${select} FOR UPDATE)`).states(states);
      const changed = await this.applyLifecycle(op, lockedWhere);
      return { matched: changed, changed };
    });
  }

  private async applyLifecycle(op: LifecycleOp, where: q.Where): Promise<number> {
    const nowMs = this.clock.now();
    // Requeue gives a fresh retry budget; resume continues where the message stopped (§2 row 19).
    const set =
      op === "cancel"
        ? "state = 'canceled', lease_id = NULL, lease_until = NULL"
        : `state = 'queued', lease_id = NULL, lease_until = NULL, dead_reason = NULL, next_run_at = ${where.param(nowMs)}${op === "resume" ? "" : ", attempt = 0"}`;
    const rows: Row[] = await this.sql.unsafe(`UPDATE messages SET ${set} ${where.sql()} RETURNING route`, where.params as never[], { prepare: true });
    if (op !== "cancel" && rows.length > 0) {
      const routes = [...new Set(rows.map((r) => r.route as string))];
      for (const route of routes) this.ready.notify(route);
      await this.sql`SELECT pg_notify(${this.channel}, r) FROM unnest(${routes}::text[]) AS r`;
    }
    return rows.length;
  }

  deleteDead(ids: readonly string[]): Promise<number> {
    return this.run("dlq_delete", async () => {
      const unique = uniqueIds(ids, "message");
      const result = await this.sql.unsafe("DELETE FROM messages WHERE id = ANY($1::text[]) AND state = 'dead'", [unique], { prepare: true });
      return result.count;
    });
  }

  queueStats(): Promise<QueueStats> {
    return this.run("queue_stats", async () => {
      const nowMs = this.clock.now();
      await this.expireLeases(nowMs);
      return queueStatsFrom(await this.countByState(), await this.queuedBuckets({}), await this.leasedByRoute(), nowMs);
    });
  }

  private async leasedByRoute(): Promise<Record<string, number>> {
    // The lease-expiry index is partial on state = 'leased', so only leased rows are visited.
    const rows: Row[] = await this.sql.unsafe("SELECT route, count(*) AS n FROM messages WHERE state = 'leased' GROUP BY route", [] as never[], { prepare: true });
    return Object.fromEntries(rows.map((row) => [row.route as string, row.n as number]));
  }

  private async countByState(): Promise<Record<MessageState, number>> {
    const counts = Object.fromEntries(MESSAGE_STATES.map((s) => [s, 0])) as Record<MessageState, number>;
    const rows: Row[] = await this.sql.unsafe("SELECT state, count(*) AS n FROM messages GROUP BY state", [] as never[], { prepare: true });
    for (const row of rows) counts[row.state as MessageState] = row.n;
    return counts;
  }

  private async queuedBuckets(selector: Selector): Promise<QueuedBucket[]> {
    const rows: Row[] = await this.sql.unsafe(
      `SELECT route, target, count(*) AS queued, min(received_at) AS oldest, min(next_run_at) AS earliest
       FROM messages WHERE state = 'queued' GROUP BY route, target`,
      [],
      { prepare: true },
    );
    return rows
      .filter((row) => matchesSelector(selector, row.route, row.target))
      .map((row) => ({ route: row.route, target: row.target, queued: row.queued, oldestQueuedReceivedAtMs: row.oldest, earliestQueuedNextRunAtMs: row.earliest }));
  }

  topQueued(selector: Selector, limit: number): Promise<TopQueuedReport> {
    return this.run("backlog_top_queued", async () => {
      validateLimit(limit);
      await this.expireLeases();
      return topQueuedReport(await this.countByState(), await this.queuedBuckets(selector), limit);
    });
  }

  oldestQueued(selector: Selector, limit: number): Promise<OldestQueuedReport> {
    return this.run("backlog_oldest_queued", async () => {
      validateLimit(limit);
      await this.expireLeases();
      const where = new q.Where().add("state = 'queued'").selector(selector);
      const countRows: Row[] = await this.sql.unsafe(`SELECT count(*) AS n FROM messages ${where.sql()}`, where.params as never[], { prepare: true });
      const limitParam = where.param(limit);
      const rows: Row[] = await this.sql.unsafe(
        `SELECT id, route, target, received_at, attempt, next_run_at FROM messages ${where.sql()} ORDER BY received_at, id LIMIT ${limitParam}`,
        where.params as never[],
        { prepare: true },
      );
      const byState = await this.countByState();
      const queuedTotal = countRows[0].n as number;
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
    return this.run("backlog_aging_summary", async () => {
      validateLimit(limit);
      await this.expireLeases();
      const where = new q.Where().states(states).selector(selector);
      const scanLimit = where.param(AGING_SCAN_LIMIT + 1);
      const rows: Row[] = await this.sql.unsafe(
        `SELECT route, target, state, received_at, next_run_at FROM messages ${where.sql()} ORDER BY received_at LIMIT ${scanLimit}`,
        where.params as never[],
        { prepare: true },
      );
      const byState = await this.countByState();
      return summarizeAging({
        rows: rows.slice(0, AGING_SCAN_LIMIT).map(
          (row): BacklogRow => ({ route: row.route, target: row.target, state: row.state, receivedAtMs: row.received_at, nextRunAtMs: row.next_run_at }),
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
    return this.run("capture_trend_sample", async () => {
      const nowMs = this.clock.now();
      await this.expireLeases(nowMs);
      // An empty queue still records that a capture happened, so trends can tell "empty" from "stale".
      const rows: Row[] = await this.sql.unsafe(
        `WITH counts AS (
           SELECT route, target, count(*) FILTER (WHERE state = 'queued') AS queued,
                  count(*) FILTER (WHERE state = 'leased') AS leased, count(*) FILTER (WHERE state = 'dead') AS dead
           FROM messages WHERE state IN ('queued', 'leased', 'dead') GROUP BY route, target
         ), chosen AS (
           SELECT * FROM counts UNION ALL SELECT '', '', 0, 0, 0 WHERE NOT EXISTS (SELECT 1 FROM counts)
         )
         INSERT INTO trend_samples (captured_at, route, target, queued, leased, dead)
         SELECT $1, route, target, queued, leased, dead FROM chosen RETURNING 1`,
        [nowMs],
        { prepare: true },
      );
      return rows.length;
    });
  }

  trends(request: TrendsRequest): Promise<TrendsReport> {
    return this.run("backlog_trends", async () => {
      const rows: Row[] = await this.sql.unsafe(
        "SELECT captured_at, route, target, queued, leased, dead FROM trend_samples WHERE captured_at >= $1 AND captured_at < $2",
        [request.untilMs - request.windowMs, request.untilMs],
        { prepare: true },
      );
      return rollupTrends(
        rows.map((r) => ({ capturedAtMs: r.captured_at, route: r.route, target: r.target, queued: r.queued, leased: r.leased, dead: r.dead })),
        request,
      );
    });
  }

  /** Deletes in chunks so no statement holds many row locks; other instances keep working meanwhile. */
  prune(): Promise<PruneReport> {
    return this.run("prune", async () => {
      const nowMs = this.clock.now();
      const report: PruneReport = { queued: 0, delivered: 0, dead: 0, attempts: 0, trendSamples: 0 };
      const queueMaxAge = positiveOrNull(this.limits.queueRetentionMs);
      const deliveredMaxAge = positiveOrNull(this.limits.deliveredRetentionMs);
      const dlqMaxAge = positiveOrNull(this.limits.dlqRetentionMs);
      const dlqMaxDepth = positiveOrNull(this.limits.dlqMaxDepth);
      const attemptsMaxAge = positiveOrNull(this.limits.attemptsRetentionMs);
      const attemptsMaxRows = positiveOrNull(this.limits.attemptsMaxRows);
      const trendMaxAge = positiveOrNull(this.limits.trendRetentionMs);
      const chunked = async (sqlText: string, params: unknown[]) => {
        let total = 0;
        for (;;) {
          this.assertOpen();
          const result = await this.sql.unsafe(sqlText, params as never[], { prepare: true });
          total += result.count;
          if (result.count < PRUNE_CHUNK) return total;
        }
      };
      const messagesWhere = (where: string) => `DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE ${where} LIMIT ${PRUNE_CHUNK} FOR UPDATE SKIP LOCKED)`;
      await this.expireLeases(nowMs);
      if (queueMaxAge !== null) report.queued = await chunked(messagesWhere("state = 'queued' AND received_at < $1"), [nowMs - queueMaxAge]);
      report.delivered = await chunked(messagesWhere("state = 'delivered' AND next_run_at < $1"), [deliveredMaxAge === null ? Number.MAX_SAFE_INTEGER : nowMs - deliveredMaxAge]);
      if (dlqMaxAge !== null) report.dead = await chunked(messagesWhere("state = 'dead' AND next_run_at < $1"), [nowMs - dlqMaxAge]);
      if (dlqMaxDepth !== null) {
        // Keeps the newest dead messages: everything past the newest dlqMaxDepth goes.
        report.dead += await chunked(
          `DELETE FROM messages WHERE id IN (
             SELECT id FROM messages WHERE state = 'dead' ORDER BY next_run_at DESC, received_at DESC, id DESC OFFSET $1 LIMIT ${PRUNE_CHUNK})`,
          [dlqMaxDepth],
        );
      }
      const attemptsChunk = (where: string) => `DELETE FROM attempts WHERE seq IN (SELECT seq FROM attempts WHERE ${where} LIMIT ${PRUNE_CHUNK})`;
      if (attemptsMaxAge !== null) report.attempts += await chunked(attemptsChunk("created_at < $1"), [nowMs - attemptsMaxAge]);
      if (attemptsMaxRows !== null) {
        report.attempts += await chunked(
          `DELETE FROM attempts WHERE seq IN (SELECT seq FROM attempts ORDER BY seq DESC OFFSET $1 LIMIT ${PRUNE_CHUNK})`,
          [attemptsMaxRows],
        );
      }
      if (trendMaxAge !== null) {
        report.trendSamples = await chunked(
          `DELETE FROM trend_samples WHERE ctid IN (SELECT ctid FROM trend_samples WHERE captured_at < $1 LIMIT ${PRUNE_CHUNK})`,
          [nowMs - trendMaxAge],
        );
      }
      await chunked(
        `DELETE FROM settled_leases WHERE lease_id IN (SELECT lease_id FROM settled_leases WHERE settled_at <= $1 LIMIT ${PRUNE_CHUNK})`,
        [nowMs - SETTLED_LEASE_MEMORY_MS],
      );
      return report;
    });
  }

  memoryStats(): null {
    return null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.closed = true;
    this.ready.close();
    await this.unlisten?.().catch(() => {});
    await this.sql.end({ timeout: 5 });
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

function insertParams(items: readonly NewMessage[], nowMs: number): never[] {
  return [
    items.map((m) => m.id),
    items.map((m) => m.route),
    items.map((m) => m.target),
    items.map((m) => m.receivedAtMs ?? nowMs),
    items.map((m) => m.nextRunAtMs ?? nowMs),
    items.map((m) => Buffer.from(m.payload.buffer, m.payload.byteOffset, m.payload.byteLength).toString("hex")),
    items.map((m) => JSON.stringify(m.headers)),
    items.map((m) => (m.trace ? JSON.stringify(m.trace) : null)),
  ] as never[];
}

/** Names the offending item from PostgreSQL's "Key (id)=(…) already exists." detail. */
function duplicateError(error: unknown, items: readonly NewMessage[]): StoreError {
  const detail = String((error as { detail?: string }).detail ?? "");
  const match = /\(id\)=\((.*)\) already exists/.exec(detail);
  const index = match ? items.findIndex((m) => m.id === match[1]) : -1;
  const id = index >= 0 ? items[index].id : match?.[1] ?? "?";
  return new StoreError("duplicate_id", `message id ${id} already exists`, index >= 0 ? index : undefined);
}

function columnsFor(include: { payload?: boolean; headers?: boolean; trace?: boolean }): string {
  return q.MESSAGE_COLUMNS + (include.payload ? ", payload" : "") + (include.headers ? ", headers" : "") + (include.trace ? ", trace" : "");
}

function viewOf(row: Row, include: { payload?: boolean; headers?: boolean; trace?: boolean }): MessageView {
  const view: MessageView = {
    id: row.id,
    route: row.route,
    target: row.target,
    state: row.state,
    receivedAtMs: row.received_at,
    attempt: row.attempt,
    nextRunAtMs: row.next_run_at,
    leaseUntilMs: row.lease_until ?? null,
    deadReason: row.dead_reason ?? null,
  };
  if (include.payload) view.payload = row.payload;
  if (include.headers) view.headers = row.headers;
  if (include.trace) view.trace = row.trace ?? null;
  return view;
}
