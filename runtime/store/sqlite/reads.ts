// The read side of the SQLite store: message and attempt lists, health statistics and the backlog
// reports. Reads first return expired leases to queued, so they show what a dequeue would see.
import { activeTotal, matchesSelector, queueStatsFrom, rollupTrends, summarizeAging, topQueuedReport, type BacklogRow } from "../backlog.js";
import { MESSAGE_STATES, type AttemptFilter, type AttemptRecord, type MessageFilter, type MessageIncludes, type MessageState, type MessageView, type Selector } from "../records.js";
import type { AgingSummaryReport, BacklogState, OldestQueuedReport, QueuedBucket, QueueStats, TopQueuedReport, TrendsReport, TrendsRequest } from "../reports.js";
import { AGING_SCAN_LIMIT } from "../store.js";
import { uniqueIds, validateLimit } from "../validate.js";
import type { SqliteConnection } from "./connection.js";
import { MESSAGE_COLUMNS, selectorWhere, statesWhere, type MessageRow } from "./queries.js";

export class SqliteReads {
  constructor(private readonly conn: SqliteConnection) {}

  listAttempts(filter: AttemptFilter): AttemptRecord[] {
    validateLimit(filter.limit);
    const conditions: string[] = [];
    const params: unknown[] = [];
    selectorWhere(filter, conditions, params);
    if (filter.messageId !== undefined) conditions.push("message_id = ?"), params.push(filter.messageId);
    if (filter.outcome !== undefined) conditions.push("outcome = ?"), params.push(filter.outcome);
    if (filter.beforeMs !== undefined) conditions.push("created_at < ?"), params.push(filter.beforeMs);
    const where = conditions.length ? `WHERE ${conditions.join(" AND ")}` : "";
    const rows = this.conn.dynamic
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
  }

  listMessages(filter: MessageFilter): MessageView[] {
    validateLimit(filter.limit);
    this.conn.expireLeases();
    const conditions: string[] = [];
    const params: unknown[] = [];
    if (filter.state !== undefined) statesWhere([filter.state], conditions);
    selectorWhere(filter, conditions, params);
    if (filter.beforeMs !== undefined) conditions.push("received_at < ?"), params.push(filter.beforeMs);
    const include = { payload: filter.includePayload, headers: filter.includeHeaders, trace: filter.includeTrace };
    const where = conditions.length ? `WHERE ${conditions.join(" AND ")}` : "";
    const rows = this.conn.dynamic
      .get(`SELECT ${columnsFor(include)} FROM messages ${where} ORDER BY received_at DESC, id DESC LIMIT ?`)
      .all(...params, filter.limit) as MessageRow[];
    return rows.map((row) => viewOf(row, include));
  }

  getMessages(ids: readonly string[], include: MessageIncludes = {}): MessageView[] {
    const unique = uniqueIds(ids, "message");
    this.conn.expireLeases();
    const rows = this.conn.dynamic
      .get(`SELECT ${columnsFor(include)} FROM messages WHERE id IN (SELECT value FROM json_each(?))`)
      .all(JSON.stringify(unique)) as MessageRow[];
    const byId = new Map(rows.map((row) => [row.id, row]));
    return unique.filter((id) => byId.has(id)).map((id) => viewOf(byId.get(id)!, include));
  }

  queueStats(): QueueStats {
    const nowMs = this.conn.clock.now();
    this.conn.expireLeases();
    return queueStatsFrom(this.countByState(), this.queuedBuckets({}), this.leasedByRoute(), nowMs);
  }

  topQueued(selector: Selector, limit: number): TopQueuedReport {
    validateLimit(limit);
    this.conn.expireLeases();
    return topQueuedReport(this.countByState(), this.queuedBuckets(selector), limit);
  }

  oldestQueued(selector: Selector, limit: number): OldestQueuedReport {
    validateLimit(limit);
    this.conn.expireLeases();
    const conditions = ["state = 'queued'"];
    const params: unknown[] = [];
    selectorWhere(selector, conditions, params);
    const where = conditions.join(" AND ");
    const rows = this.conn.dynamic
      .get(`SELECT id, route, target, received_at, attempt, next_run_at FROM messages WHERE ${where} ORDER BY received_at, id LIMIT ?`)
      .all(...params, limit) as MessageRow[];
    const totals = this.conn.dynamic.get(`SELECT count(*) AS n, min(next_run_at) AS earliest FROM messages WHERE ${where}`).get(...params) as { n: number; earliest: number | null };
    const queuedTotal = totals.n;
    const byState = this.countByState();
    return {
      queueTotal: activeTotal(byState),
      queuedTotal,
      limit,
      returned: rows.length,
      truncated: queuedTotal > rows.length,
      earliestQueuedNextRunAtMs: totals.earliest,
      items: rows.map((row) => ({ id: row.id, route: row.route, target: row.target, receivedAtMs: row.received_at, attempt: row.attempt, nextRunAtMs: row.next_run_at })),
    };
  }

  agingSummary(selector: Selector, states: readonly BacklogState[], limit: number): AgingSummaryReport {
    validateLimit(limit);
    this.conn.expireLeases();
    const conditions: string[] = [];
    const params: unknown[] = [];
    statesWhere(states, conditions);
    selectorWhere(selector, conditions, params);
    const rows = this.conn.dynamic
      .get(`SELECT route, target, state, received_at, next_run_at FROM messages WHERE ${conditions.join(" AND ")} ORDER BY received_at LIMIT ?`)
      .all(...params, AGING_SCAN_LIMIT + 1) as MessageRow[];
    const byState = this.countByState();
    return summarizeAging({
      rows: rows.slice(0, AGING_SCAN_LIMIT).map(
        (row): BacklogRow => ({ route: row.route, target: row.target, state: row.state as BacklogState, receivedAtMs: row.received_at, nextRunAtMs: row.next_run_at }),
      ),
      nowMs: this.conn.clock.now(),
      states,
      limit,
      queueTotal: activeTotal(byState),
      queuedTotal: byState.queued,
      sourceBounded: rows.length > AGING_SCAN_LIMIT,
    });
  }

  trends(request: TrendsRequest): TrendsReport {
    const rows = this.conn.sql.trendSamples.all(request.untilMs - request.windowMs, request.untilMs) as {
      captured_at: number; route: string; target: string; queued: number; leased: number; dead: number;
    }[];
    return rollupTrends(
      rows.map((r) => ({ capturedAtMs: r.captured_at, route: r.route, target: r.target, queued: r.queued, leased: r.leased, dead: r.dead })),
      request,
    );
  }

  leasedByRoute(): Record<string, number> {
    const rows = this.conn.sql.leasedByRoute.all() as { route: string; n: number }[];
    return Object.fromEntries(rows.map((row) => [row.route, row.n]));
  }

  countByState(): Record<MessageState, number> {
    const counts = Object.fromEntries(MESSAGE_STATES.map((s) => [s, 0])) as Record<MessageState, number>;
    for (const row of this.conn.sql.countByState.all() as { state: MessageState; n: number }[]) counts[row.state] = row.n;
    return counts;
  }

  queuedBuckets(selector: Selector): QueuedBucket[] {
    const rows = this.conn.sql.queuedBuckets.all() as { route: string; target: string; queued: number; oldest: number; earliest: number }[];
    return rows
      .filter((row) => matchesSelector(selector, row.route, row.target))
      .map((row) => ({ route: row.route, target: row.target, queued: row.queued, oldestQueuedReceivedAtMs: row.oldest, earliestQueuedNextRunAtMs: row.earliest }));
  }
}

function columnsFor(include: MessageIncludes): string {
  return MESSAGE_COLUMNS + (include.payload ? ", payload" : "") + (include.headers ? ", headers" : "") + (include.trace ? ", trace" : "");
}

function viewOf(row: MessageRow, include: MessageIncludes): MessageView {
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
