// Queue statistics, backlog reports and trend samples on the SQLite backend. Reads first return
// expired leases to queued, so they show what a dequeue would see.
import { activeTotal, matchesSelector, queueStatsFrom, rollupTrends, summarizeAging, topQueuedReport, type BacklogRow } from "../backlog.js";
import { MESSAGE_STATES, type MessageState, type Selector } from "../records.js";
import type { AgingSummaryReport, BacklogState, OldestQueuedReport, QueuedBucket, QueueStats, TopQueuedReport, TrendsReport, TrendsRequest } from "../reports.js";
import { AGING_SCAN_LIMIT } from "../store.js";
import type { SqliteContext } from "./context.js";
import { selectorWhere, statesWhere, type MessageRow } from "./queries.js";

export function queueStats(cx: SqliteContext): QueueStats {
  const nowMs = cx.conn.clock.now();
  cx.conn.expireLeases();
  return queueStatsFrom(countByState(cx), queuedBuckets(cx, {}), leasedByRoute(cx), nowMs);
}

export function topQueued(cx: SqliteContext, selector: Selector, limit: number): TopQueuedReport {
  cx.conn.expireLeases();
  return topQueuedReport(countByState(cx), queuedBuckets(cx, selector), limit);
}

export function oldestQueued(cx: SqliteContext, selector: Selector, limit: number): OldestQueuedReport {
  cx.conn.expireLeases();
  const conditions = ["state = 'queued'"];
  const params: unknown[] = [];
  selectorWhere(selector, conditions, params);
  const where = conditions.join(" AND ");
  const rows = cx.conn.dynamic
    .get(`SELECT id, route, target, received_at, attempt, next_run_at FROM messages WHERE ${where} ORDER BY received_at, id LIMIT ?`)
    .all(...params, limit) as MessageRow[];
  const totals = cx.conn.dynamic.get(`SELECT count(*) AS n, min(next_run_at) AS earliest FROM messages WHERE ${where}`).get(...params) as { n: number; earliest: number | null };
  const queuedTotal = totals.n;
  const byState = countByState(cx);
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

export function agingSummary(cx: SqliteContext, selector: Selector, states: readonly BacklogState[], limit: number): AgingSummaryReport {
  cx.conn.expireLeases();
  const conditions: string[] = [];
  const params: unknown[] = [];
  statesWhere(states, conditions);
  selectorWhere(selector, conditions, params);
  const rows = cx.conn.dynamic
    .get(`SELECT route, target, state, received_at, next_run_at FROM messages WHERE ${conditions.join(" AND ")} ORDER BY received_at LIMIT ?`)
    .all(...params, AGING_SCAN_LIMIT + 1) as MessageRow[];
  const byState = countByState(cx);
  return summarizeAging({
    rows: rows.slice(0, AGING_SCAN_LIMIT).map(
      (row): BacklogRow => ({ route: row.route, target: row.target, state: row.state as BacklogState, receivedAtMs: row.received_at, nextRunAtMs: row.next_run_at }),
    ),
    nowMs: cx.conn.clock.now(),
    states,
    limit,
    queueTotal: activeTotal(byState),
    queuedTotal: byState.queued,
    sourceBounded: rows.length > AGING_SCAN_LIMIT,
  });
}

export function trends(cx: SqliteContext, request: TrendsRequest): TrendsReport {
  const rows = cx.conn.sql.trendSamples.all(request.untilMs - request.windowMs, request.untilMs) as {
    captured_at: number; route: string; target: string; queued: number; leased: number; dead: number;
  }[];
  return rollupTrends(
    rows.map((r) => ({ capturedAtMs: r.captured_at, route: r.route, target: r.target, queued: r.queued, leased: r.leased, dead: r.dead })),
    request,
  );
}

export function leasedByRoute(cx: SqliteContext): Record<string, number> {
  const rows = cx.conn.sql.leasedByRoute.all() as { route: string; n: number }[];
  return Object.fromEntries(rows.map((row) => [row.route, row.n]));
}

export function countByState(cx: SqliteContext): Record<MessageState, number> {
  const counts = Object.fromEntries(MESSAGE_STATES.map((s) => [s, 0])) as Record<MessageState, number>;
  for (const row of cx.conn.sql.countByState.all() as { state: MessageState; n: number }[]) counts[row.state] = row.n;
  return counts;
}

export function queuedBuckets(cx: SqliteContext, selector: Selector): QueuedBucket[] {
  const rows = cx.conn.sql.queuedBuckets.all() as { route: string; target: string; queued: number; oldest: number; earliest: number }[];
  return rows
    .filter((row) => matchesSelector(selector, row.route, row.target))
    .map((row) => ({ route: row.route, target: row.target, queued: row.queued, oldestQueuedReceivedAtMs: row.oldest, earliestQueuedNextRunAtMs: row.earliest }));
}

export function captureTrendSample(cx: SqliteContext): number {
  const nowMs = cx.conn.clock.now();
  return cx.conn.write(() => {
    cx.conn.sql.expireLeases.run(nowMs);
    const rows = cx.conn.sql.trendCounts.all() as { route: string; target: string; queued: number; leased: number; dead: number }[];
    // An empty queue still records that a capture happened, so trends can tell "empty" from "stale".
    if (rows.length === 0) rows.push({ route: "", target: "", queued: 0, leased: 0, dead: 0 });
    for (const row of rows) cx.conn.sql.insertTrendSample.run(nowMs, row.route, row.target, row.queued, row.leased, row.dead);
    return rows.length;
  });
}
