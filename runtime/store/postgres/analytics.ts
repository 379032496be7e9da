// Queue statistics and backlog analytics on PostgreSQL: the database counts and groups, the shared
// arithmetic in ../backlog.ts shapes the reports, so every backend answers alike.
import { activeTotal, matchesSelector, queueStatsFrom, rollupTrends, summarizeAging, topQueuedReport, type BacklogRow } from "../backlog.js";
import { MESSAGE_STATES, type MessageState, type Selector } from "../records.js";
import type { AgingSummaryReport, BacklogState, OldestQueuedReport, QueuedBucket, QueueStats, TopQueuedReport, TrendsReport, TrendsRequest } from "../reports.js";
import { AGING_SCAN_LIMIT } from "../store.js";
import type { Sql, Tx } from "./connect.js";
import type { PgContext, Row } from "./context.js";
import * as q from "./queries.js";

export async function queueStats(cx: PgContext): Promise<QueueStats> {
  const nowMs = cx.clock.now();
  await cx.expireLeases(nowMs);
  return queueStatsFrom(await countByState(cx), await queuedBuckets(cx, {}), await leasedByRoute(cx), nowMs);
}

async function leasedByRoute(cx: PgContext): Promise<Record<string, number>> {
  // The lease-expiry index is partial on state = 'leased', so only leased rows are visited.
  const rows: Row[] = await cx.sql.unsafe("SELECT route, count(*) AS n FROM messages WHERE state = 'leased' GROUP BY route", [] as never[], { prepare: true });
  return Object.fromEntries(rows.map((row) => [row.route as string, Number(row.n)]));
}

export async function topQueued(cx: PgContext, selector: Selector, limit: number): Promise<TopQueuedReport> {
  await cx.expireLeases();
  return topQueuedReport(await countByState(cx), await queuedBuckets(cx, selector), limit);
}

export async function oldestQueued(cx: PgContext, selector: Selector, limit: number): Promise<OldestQueuedReport> {
  await cx.expireLeases();
  const where = new q.Where().add("state = 'queued'").selector(selector);
  const countRows: Row[] = await cx.sql.unsafe(`SELECT count(*) AS n, min(next_run_at) AS earliest FROM messages ${where.sql()}`, where.params as never[], {
    prepare: true,
  });
  const limitParam = where.param(limit);
  const rows: Row[] = await cx.sql.unsafe(
    `SELECT id, route, target, received_at, attempt, next_run_at FROM messages ${where.sql()} ORDER BY received_at, id LIMIT ${limitParam}`,
    where.params as never[],
    { prepare: true },
  );
  const byState = await countByState(cx);
  const queuedTotal = countRows[0].n as number;
  return {
    queueTotal: activeTotal(byState),
    queuedTotal,
    limit,
    returned: rows.length,
    truncated: queuedTotal > rows.length,
    earliestQueuedNextRunAtMs: countRows[0].earliest ?? null,
    items: rows.map((row) => ({ id: row.id, route: row.route, target: row.target, receivedAtMs: row.received_at, attempt: row.attempt, nextRunAtMs: row.next_run_at })),
  };
}

export async function agingSummary(cx: PgContext, selector: Selector, states: readonly BacklogState[], limit: number): Promise<AgingSummaryReport> {
  await cx.expireLeases();
  const where = new q.Where().states(states).selector(selector);
  const scanLimit = where.param(AGING_SCAN_LIMIT + 1);
  const rows: Row[] = await cx.sql.unsafe(
    `SELECT route, target, state, received_at, next_run_at FROM messages ${where.sql()} ORDER BY received_at LIMIT ${scanLimit}`,
    where.params as never[],
    { prepare: true },
  );
  const byState = await countByState(cx);
  return summarizeAging({
    rows: rows.slice(0, AGING_SCAN_LIMIT).map(
      (row): BacklogRow => ({ route: row.route, target: row.target, state: row.state, receivedAtMs: row.received_at, nextRunAtMs: row.next_run_at }),
    ),
    nowMs: cx.clock.now(),
    states,
    limit,
    queueTotal: activeTotal(byState),
    queuedTotal: byState.queued,
    sourceBounded: rows.length > AGING_SCAN_LIMIT,
  });
}

/** Stores one sample per route/target with queued, leased or dead messages; returns how many. */
/**
 * Records one trend sample per (route, target), or one empty row when nothing is queued, leased or
 * dead. Several instances share the schema and each captures on its own timer, so with `intervalMs`
 * a capture that finds a sample younger than half the interval (another instance's) records none:
 * a trend bucket then holds one sample per interval, not one per instance. The check and the insert
 * run under an advisory lock of the schema, so two instances capturing together record one sample.
 * Returns the rows recorded.
 */
export async function captureTrendSample(cx: PgContext, schema: string, intervalMs?: number): Promise<number> {
  const nowMs = cx.clock.now();
  await cx.expireLeases(nowMs);
  if (!intervalMs || intervalMs <= 0) return insertTrendSample(cx.sql, nowMs);
  return cx.sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${"spool-trend-sample:" + schema}))`;
    const [recent] = await tx.unsafe("SELECT 1 FROM trend_samples WHERE captured_at > $1 LIMIT 1", [nowMs - intervalMs / 2], { prepare: true });
    return recent ? 0 : insertTrendSample(tx, nowMs);
  });
}

async function insertTrendSample(sql: Sql | Tx, nowMs: number): Promise<number> {
  // An empty queue still records that a capture happened, so trends can tell "empty" from "stale".
  const rows: Row[] = await sql.unsafe(
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
}

export async function trends(cx: PgContext, request: TrendsRequest): Promise<TrendsReport> {
  const rows: Row[] = await cx.sql.unsafe(
    "SELECT captured_at, route, target, queued, leased, dead FROM trend_samples WHERE captured_at >= $1 AND captured_at < $2",
    [request.untilMs - request.windowMs, request.untilMs],
    { prepare: true },
  );
  return rollupTrends(
    rows.map((r) => ({ capturedAtMs: r.captured_at, route: r.route, target: r.target, queued: r.queued, leased: r.leased, dead: r.dead })),
    request,
  );
}

const COUNT_BY_STATE = `
SELECT 'queued' AS state, count(*) AS n FROM messages WHERE state = 'queued'
UNION ALL SELECT 'leased', count(*) FROM messages WHERE state = 'leased'
UNION ALL SELECT state, count(*) FROM messages WHERE state IN ('delivered', 'dead', 'canceled') GROUP BY state`;

async function countByState(cx: PgContext): Promise<Record<MessageState, number>> {
  const counts = Object.fromEntries(MESSAGE_STATES.map((s) => [s, 0])) as Record<MessageState, number>;
  // One count per partial index (schema 7: no index holds every state), so none reads the table.
  const rows: Row[] = await cx.sql.unsafe(COUNT_BY_STATE, [] as never[], { prepare: true });
  for (const row of rows) counts[row.state as MessageState] = row.n;
  return counts;
}

async function queuedBuckets(cx: PgContext, selector: Selector): Promise<QueuedBucket[]> {
  const rows: Row[] = await cx.sql.unsafe(
    `SELECT route, target, count(*) AS queued, min(received_at) AS oldest, min(next_run_at) AS earliest
     FROM messages WHERE state = 'queued' GROUP BY route, target`,
    [],
    { prepare: true },
  );
  return rows
    .filter((row) => matchesSelector(selector, row.route, row.target))
    .map((row) => ({ route: row.route, target: row.target, queued: row.queued, oldestQueuedReceivedAtMs: row.oldest, earliestQueuedNextRunAtMs: row.earliest }));
}
