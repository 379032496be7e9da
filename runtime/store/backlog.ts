// Backlog analytics as pure functions over rows the backends fetch (docs/api.md
// "Admin API"): every backend answers aging_summary and trends with the same arithmetic.
import type { MessageState } from "./records.js";
import type { QueueStats, TopQueuedReport } from "./reports.js";
import { HEALTH_TOP_QUEUED } from "./store.js";
import type { Selector } from "./records.js";
import type { AgePercentiles, AgeWindows, AgingBucket, AgingSummaryReport, BacklogState, QueuedBucket, TrendPoint, TrendSample, TrendsReport, TrendsRequest } from "./reports.js";

export interface BacklogRow {
  route: string;
  target: string;
  state: BacklogState;
  receivedAtMs: number;
  nextRunAtMs: number;
}

const MINUTE_MS = 60_000;

export function emptyAgeWindows(): AgeWindows {
  return { le_5m: 0, gt_5m_le_15m: 0, gt_15m_le_1h: 0, gt_1h_le_6h: 0, gt_6h: 0 };
}

function addToWindow(windows: AgeWindows, ageMs: number): void {
  if (ageMs <= 5 * MINUTE_MS) windows.le_5m++;
  else if (ageMs <= 15 * MINUTE_MS) windows.gt_5m_le_15m++;
  else if (ageMs <= 60 * MINUTE_MS) windows.gt_15m_le_1h++;
  else if (ageMs <= 360 * MINUTE_MS) windows.gt_1h_le_6h++;
  else windows.gt_6h++;
}

/** Nearest-rank percentiles, in seconds, of ages given in ms; null when there are none. */
export function agePercentiles(agesMs: number[]): AgePercentiles | null {
  if (agesMs.length === 0) return null;
  const sorted = [...agesMs].sort((a, b) => a - b);
  const pick = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] / 1000;
  return { p50: pick(50), p90: pick(90), p99: pick(99) };
}

export interface AgingInput {
  rows: readonly BacklogRow[];
  nowMs: number;
  states: readonly BacklogState[];
  limit: number;
  queueTotal: number;
  queuedTotal: number;
  sourceBounded: boolean;
}

/** Groups rows by route/target; buckets are ordered by observed total, then route and target. */
export function summarizeAging(input: AgingInput): AgingSummaryReport {
  const { rows, nowMs } = input;
  const buckets = new Map<string, { bucket: AgingBucket; agesMs: number[] }>();
  const allAgesMs: number[] = [];
  const windows = emptyAgeWindows();
  for (const row of rows) {
    const key = row.route + "\u0000" + row.target;
    let entry = buckets.get(key);
    if (!entry) {
      entry = {
        agesMs: [],
        bucket: {
          route: row.route,
          target: row.target,
          stateCounts: { queued: 0, leased: 0, dead: 0 },
          totalObserved: 0,
          ageSampleCount: 0,
          ageWindows: emptyAgeWindows(),
          agePercentilesSeconds: null,
          oldestQueuedReceivedAtMs: null,
          newestQueuedReceivedAtMs: null,
          earliestQueuedNextRunAtMs: null,
          readyOverdueCount: 0,
          maxReadyLagMs: null,
        },
      };
      buckets.set(key, entry);
    }
    const { bucket } = entry;
    const ageMs = Math.max(0, nowMs - row.receivedAtMs);
    bucket.stateCounts[row.state]++;
    bucket.totalObserved++;
    bucket.ageSampleCount++;
    entry.agesMs.push(ageMs);
    allAgesMs.push(ageMs);
    addToWindow(bucket.ageWindows, ageMs);
    addToWindow(windows, ageMs);
    if (row.state === "queued") {
      bucket.oldestQueuedReceivedAtMs = minOrValue(bucket.oldestQueuedReceivedAtMs, row.receivedAtMs);
      bucket.newestQueuedReceivedAtMs = Math.max(bucket.newestQueuedReceivedAtMs ?? row.receivedAtMs, row.receivedAtMs);
      bucket.earliestQueuedNextRunAtMs = minOrValue(bucket.earliestQueuedNextRunAtMs, row.nextRunAtMs);
      if (row.nextRunAtMs <= nowMs) {
        bucket.readyOverdueCount++;
        bucket.maxReadyLagMs = Math.max(bucket.maxReadyLagMs ?? 0, nowMs - row.nextRunAtMs);
      }
    }
  }
  const ordered = [...buckets.values()]
    .map(({ bucket, agesMs }) => ({ ...bucket, agePercentilesSeconds: agePercentiles(agesMs) }))
    .sort((a, b) => b.totalObserved - a.totalObserved || compareText(a.route, b.route) || compareText(a.target, b.target));
  return {
    queueTotal: input.queueTotal,
    queuedTotal: input.queuedTotal,
    limit: input.limit,
    states: [...input.states],
    scanned: rows.length,
    sourceBounded: input.sourceBounded,
    bucketCount: ordered.length,
    truncated: ordered.length > input.limit,
    ageSampleCount: allAgesMs.length,
    ageWindows: windows,
    agePercentilesSeconds: agePercentiles(allAgesMs),
    // Over every bucket scanned, not only the `limit` returned.
    oldestQueuedReceivedAtMs: minOver(ordered, (b) => b.oldestQueuedReceivedAtMs),
    earliestQueuedNextRunAtMs: minOver(ordered, (b) => b.earliestQueuedNextRunAtMs),
    items: ordered.slice(0, input.limit),
  };
}

function minOver<T>(items: readonly T[], value: (item: T) => number | null): number | null {
  let min: number | null = null;
  for (const item of items) {
    const v = value(item);
    if (v !== null) min = minOrValue(min, v);
  }
  return min;
}

function minOrValue(current: number | null, value: number): number {
  return current === null ? value : Math.min(current, value);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** queued + leased + dead: what `total` and `queue_total` count everywhere. */
export function activeTotal(byState: Readonly<Record<MessageState, number>>): number {
  return byState.queued + byState.leased + byState.dead;
}

/** The earliest received_at and next_run_at over the buckets (a loop: bucket counts are unbounded). */
function bucketExtremes(buckets: readonly QueuedBucket[]): { oldest: number | null; earliest: number | null } {
  let oldest: number | null = null;
  let earliest: number | null = null;
  for (const b of buckets) {
    oldest = minOrValue(oldest, b.oldestQueuedReceivedAtMs);
    earliest = minOrValue(earliest, b.earliestQueuedNextRunAtMs);
  }
  return { oldest, earliest };
}

/**
 * Health statistics from the counts by state, the queued buckets and the leased counts by route
 * that every backend computes its own way.
 */
export function queueStatsFrom(
  byState: Record<MessageState, number>,
  buckets: QueuedBucket[],
  leasedByRoute: Record<string, number>,
  nowMs: number,
): QueueStats {
  const { oldest, earliest } = bucketExtremes(buckets);
  return {
    byState,
    total: activeTotal(byState),
    oldestQueuedReceivedAtMs: oldest,
    oldestQueuedAgeMs: oldest === null ? null : Math.max(0, nowMs - oldest),
    earliestQueuedNextRunAtMs: earliest,
    readyLagMs: earliest === null ? null : Math.max(0, nowMs - earliest),
    topQueued: sortQueuedBuckets(buckets).slice(0, HEALTH_TOP_QUEUED),
    leasedByRoute,
  };
}

/** GET /backlog/top_queued from the counts by state and the selected queued buckets. */
export function topQueuedReport(byState: Readonly<Record<MessageState, number>>, buckets: QueuedBucket[], limit: number): TopQueuedReport {
  const sorted = sortQueuedBuckets(buckets);
  const { oldest, earliest } = bucketExtremes(sorted);
  return {
    queueTotal: activeTotal(byState),
    queuedTotal: sorted.reduce((sum, b) => sum + b.queued, 0),
    limit,
    truncated: sorted.length > limit,
    oldestQueuedReceivedAtMs: oldest,
    earliestQueuedNextRunAtMs: earliest,
    items: sorted.slice(0, limit),
  };
}

/** Most queued first; ties by route then target, so every backend lists buckets in one order. */
export function sortQueuedBuckets(buckets: QueuedBucket[]): QueuedBucket[] {
  return buckets.sort((a, b) => b.queued - a.queued || compareText(a.route, b.route) || compareText(a.target, b.target));
}

export function matchesSelector(selector: Selector, route: string, target: string): boolean {
  if (selector.target !== undefined && selector.target !== target) return false;
  if (selector.route === undefined) return true;
  return typeof selector.route === "string" ? selector.route === route : selector.route.includes(route);
}

/** The most points a trends answer holds (168h at 1m steps). */
const MAX_TREND_POINTS = 10_080;

/**
 * Rolls samples up into `step` buckets over `window` ending at `until`. `samples` are all samples
 * captured in the window, for every route: a capture in which the selected routes had nothing queued
 * still counts as a sample with zeros.
 */
export function rollupTrends(samples: readonly TrendSample[], request: TrendsRequest): TrendsReport {
  const { windowMs, stepMs, untilMs } = request;
  const sinceMs = untilMs - windowMs;
  const wanted = Math.ceil(windowMs / stepMs);
  const pointCount = Math.min(wanted, MAX_TREND_POINTS);
  const firstBucketMs = untilMs - pointCount * stepMs;
  const totalsByCapture = new Map<number, { queued: number; leased: number; dead: number }>();
  for (const sample of samples) {
    if (sample.capturedAtMs < firstBucketMs || sample.capturedAtMs >= untilMs) continue;
    let totals = totalsByCapture.get(sample.capturedAtMs);
    if (!totals) {
      totals = { queued: 0, leased: 0, dead: 0 };
      totalsByCapture.set(sample.capturedAtMs, totals);
    }
    if (matchesSelector(request, sample.route, sample.target)) {
      totals.queued += sample.queued;
      totals.leased += sample.leased;
      totals.dead += sample.dead;
    }
  }
  const items: TrendPoint[] = [];
  for (let i = 0; i < pointCount; i++) {
    const bucketStartMs = firstBucketMs + i * stepMs;
    items.push({
      bucketStartMs,
      bucketEndMs: bucketStartMs + stepMs,
      sampleCount: 0,
      lastCapturedAtMs: null,
      queuedLast: 0,
      leasedLast: 0,
      deadLast: 0,
      totalLast: 0,
      queuedMax: 0,
      leasedMax: 0,
      deadMax: 0,
      totalMax: 0,
    });
  }
  const captures = [...totalsByCapture.entries()].sort((a, b) => a[0] - b[0]);
  let latestCapturedAtMs: number | null = null;
  let latestTotal = 0;
  let maxTotal = 0;
  for (const [capturedAtMs, totals] of captures) {
    const point = items[Math.floor((capturedAtMs - firstBucketMs) / stepMs)];
    const total = totals.queued + totals.leased + totals.dead;
    point.sampleCount++;
    point.lastCapturedAtMs = capturedAtMs;
    point.queuedLast = totals.queued;
    point.leasedLast = totals.leased;
    point.deadLast = totals.dead;
    point.totalLast = total;
    point.queuedMax = Math.max(point.queuedMax, totals.queued);
    point.leasedMax = Math.max(point.leasedMax, totals.leased);
    point.deadMax = Math.max(point.deadMax, totals.dead);
    point.totalMax = Math.max(point.totalMax, total);
    latestCapturedAtMs = capturedAtMs;
    latestTotal = total;
    maxTotal = Math.max(maxTotal, total);
  }
  return {
    windowMs,
    stepMs,
    sinceMs,
    untilMs,
    sampleCount: captures.length,
    pointCount,
    nonEmptyPointCount: items.filter((p) => p.sampleCount > 0).length,
    truncated: pointCount < wanted,
    latestCapturedAtMs,
    latestTotal,
    maxTotal,
    items,
  };
}
