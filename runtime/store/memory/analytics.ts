// Queue statistics, backlog analytics and trend samples on the memory backend: scans of the table,
// shaped by the shared arithmetic in ../backlog.ts so every backend answers alike.
import { activeTotal, matchesSelector, queueStatsFrom, rollupTrends, summarizeAging, topQueuedReport, type BacklogRow } from "../backlog.js";
import type { Selector } from "../records.js";
import type { AgingSummaryReport, BacklogState, OldestQueuedReport, QueuedBucket, QueueStats, TopQueuedReport, TrendSample, TrendsReport, TrendsRequest } from "../reports.js";
import { AGING_SCAN_LIMIT } from "../store.js";
import type { MemoryContext } from "./context.js";
import { oldestFirst, type MessageTable } from "./table.js";

export function queueStats(cx: MemoryContext): QueueStats {
  const nowMs = cx.clock.now();
  cx.table.expireLeases(nowMs);
  return queueStatsFrom({ ...cx.table.countByState }, queuedBuckets(cx.table, {}), cx.table.leasedByRoute(), nowMs);
}

export function topQueued(cx: MemoryContext, selector: Selector, limit: number): TopQueuedReport {
  cx.table.expireLeases(cx.clock.now());
  return topQueuedReport(cx.table.countByState, queuedBuckets(cx.table, selector), limit);
}

export function oldestQueued(cx: MemoryContext, selector: Selector, limit: number): OldestQueuedReport {
  const { table } = cx;
  table.expireLeases(cx.clock.now());
  const queued = [...table.rows.values()].filter((row) => row.state === "queued" && matchesSelector(selector, row.route, row.target));
  queued.sort(oldestFirst);
  const items = queued.slice(0, limit).map((row) => ({
    id: row.id,
    route: row.route,
    target: row.target,
    receivedAtMs: row.receivedAtMs,
    attempt: row.attempt,
    nextRunAtMs: row.nextRunAtMs,
  }));
  return {
    queueTotal: activeTotal(table.countByState),
    queuedTotal: queued.length,
    limit,
    returned: items.length,
    truncated: queued.length > limit,
    earliestQueuedNextRunAtMs: queued.length === 0 ? null : queued.reduce((min, row) => Math.min(min, row.nextRunAtMs), Infinity),
    items,
  };
}

export function agingSummary(cx: MemoryContext, selector: Selector, states: readonly BacklogState[], limit: number): AgingSummaryReport {
  const { table } = cx;
  const nowMs = cx.clock.now();
  table.expireLeases(nowMs);
  const rows: BacklogRow[] = [];
  for (const row of table.rows.values()) {
    if (!(states as readonly string[]).includes(row.state) || !matchesSelector(selector, row.route, row.target)) continue;
    rows.push({ route: row.route, target: row.target, state: row.state as BacklogState, receivedAtMs: row.receivedAtMs, nextRunAtMs: row.nextRunAtMs });
  }
  rows.sort((a, b) => a.receivedAtMs - b.receivedAtMs);
  return summarizeAging({
    rows: rows.slice(0, AGING_SCAN_LIMIT),
    nowMs,
    states,
    limit,
    queueTotal: activeTotal(table.countByState),
    queuedTotal: table.countByState.queued,
    sourceBounded: rows.length > AGING_SCAN_LIMIT,
  });
}

/** The trend samples captured so far, oldest first. */
export class TrendLog {
  private samples: TrendSample[] = [];

  /** Stores one sample per route/target with queued, leased or dead messages; returns how many. */
  capture(cx: MemoryContext): number {
    const nowMs = cx.clock.now();
    cx.table.expireLeases(nowMs);
    const byBucket = new Map<string, TrendSample>();
    for (const row of cx.table.rows.values()) {
      if (row.state !== "queued" && row.state !== "leased" && row.state !== "dead") continue;
      const key = row.route + "\u0000" + row.target;
      let sample = byBucket.get(key);
      if (!sample) byBucket.set(key, (sample = { capturedAtMs: nowMs, route: row.route, target: row.target, queued: 0, leased: 0, dead: 0 }));
      sample[row.state]++;
    }
    // An empty queue still records that a capture happened, so trends can tell "empty" from "stale".
    if (byBucket.size === 0) byBucket.set("", { capturedAtMs: nowMs, route: "", target: "", queued: 0, leased: 0, dead: 0 });
    this.samples.push(...byBucket.values());
    return byBucket.size;
  }

  trends(request: TrendsRequest): TrendsReport {
    const sinceMs = request.untilMs - request.windowMs;
    return rollupTrends(
      this.samples.filter((s) => s.capturedAtMs >= sinceMs && s.capturedAtMs < request.untilMs),
      request,
    );
  }

  /** Drops samples captured before `minCapturedAtMs`; returns how many went. */
  prune(minCapturedAtMs: number): number {
    const before = this.samples.length;
    this.samples = this.samples.filter((s) => s.capturedAtMs >= minCapturedAtMs);
    return before - this.samples.length;
  }
}

function queuedBuckets(table: MessageTable, selector: Selector): QueuedBucket[] {
  const buckets = new Map<string, QueuedBucket>();
  for (const row of table.rows.values()) {
    if (row.state !== "queued" || !matchesSelector(selector, row.route, row.target)) continue;
    const key = row.route + "\u0000" + row.target;
    const bucket = buckets.get(key);
    if (!bucket) {
      buckets.set(key, { route: row.route, target: row.target, queued: 1, oldestQueuedReceivedAtMs: row.receivedAtMs, earliestQueuedNextRunAtMs: row.nextRunAtMs });
    } else {
      bucket.queued++;
      bucket.oldestQueuedReceivedAtMs = Math.min(bucket.oldestQueuedReceivedAtMs, row.receivedAtMs);
      bucket.earliestQueuedNextRunAtMs = Math.min(bucket.earliestQueuedNextRunAtMs, row.nextRunAtMs);
    }
  }
  return [...buckets.values()];
}
