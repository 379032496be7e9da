// GET /backlog/top_queued, /oldest_queued, /aging_summary, /trends (docs/api.md
// "Admin API", reads and their bounds).
import type { Selector } from "../store/records.js";
import type { BacklogState } from "../store/reports.js";
import { computeTrendSignals } from "./diagnostics.js";
import { QueryReader, formatRfc3339, invalidQuery } from "./params.js";
import type { AdminRequest } from "./request.js";
import { trendSignalsJson } from "./trend-signals.js";

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
export const TRENDS_DEFAULT_WINDOW_MS = HOUR_MS;
export const TRENDS_MAX_WINDOW_MS = 168 * HOUR_MS;
export const TRENDS_DEFAULT_STEP_MS = 5 * MINUTE_MS;
export const TRENDS_MIN_STEP_MS = MINUTE_MS;
export const TRENDS_MAX_STEP_MS = HOUR_MS;
const BACKLOG_STATES: readonly BacklogState[] = ["queued", "leased", "dead"];

function selectorOf(query: QueryReader): Selector {
  return { route: query.route(), target: query.string("target") };
}

function selectorJson(selector: Selector): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  if (selector.route !== undefined) json.route = selector.route;
  if (selector.target !== undefined) json.target = selector.target;
  return json;
}

const seconds = (ms: number) => Math.max(0, Math.floor(ms / 1000));

/** The age fields of top_queued, present only when there is something queued. */
function ageFields(nowMs: number, oldestReceivedAtMs: number | null, earliestNextRunAtMs: number | null): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (oldestReceivedAtMs !== null) {
    fields.oldest_queued_received_at = formatRfc3339(oldestReceivedAtMs);
    fields.oldest_queued_age_seconds = seconds(nowMs - oldestReceivedAtMs);
  }
  if (earliestNextRunAtMs !== null) {
    fields.earliest_queued_next_run_at = formatRfc3339(earliestNextRunAtMs);
    fields.ready_lag_seconds = seconds(nowMs - earliestNextRunAtMs);
  }
  return fields;
}

export async function topQueued(request: AdminRequest): Promise<unknown> {
  const query = new QueryReader(request.query, ["route", "target", "limit"]);
  const selector = selectorOf(query);
  const limit = query.limit();
  const report = await request.deps.store.topQueued(selector, limit);
  const nowMs = request.deps.clock.now();
  return {
    queue_total: report.queueTotal,
    queued_total: report.queuedTotal,
    limit: report.limit,
    truncated: report.truncated,
    source_bounded: false,
    ...ageFields(nowMs, report.oldestQueuedReceivedAtMs, report.earliestQueuedNextRunAtMs),
    selector: selectorJson(selector),
    items: report.items.map((bucket) => ({
      route: bucket.route,
      target: bucket.target,
      queued: bucket.queued,
      ...ageFields(nowMs, bucket.oldestQueuedReceivedAtMs, bucket.earliestQueuedNextRunAtMs),
    })),
  };
}

export async function oldestQueued(request: AdminRequest): Promise<unknown> {
  const query = new QueryReader(request.query, ["route", "target", "limit"]);
  const selector = selectorOf(query);
  const report = await request.deps.store.oldestQueued(selector, query.limit());
  const nowMs = request.deps.clock.now();
  const oldest = report.items[0];
  return {
    queue_total: report.queueTotal,
    queued_total: report.queuedTotal,
    limit: report.limit,
    returned: report.returned,
    truncated: report.truncated,
    // Selector-wide, as top_queued and aging_summary report them too: the oldest received is the first
    // item (ascending order), the earliest next_run_at may be past the returned page.
    ...ageFields(nowMs, oldest ? oldest.receivedAtMs : null, report.earliestQueuedNextRunAtMs),
    selector: selectorJson(selector),
    items: report.items.map((item) => ({
      id: item.id,
      route: item.route,
      target: item.target,
      received_at: formatRfc3339(item.receivedAtMs),
      attempt: item.attempt,
      next_run_at: formatRfc3339(item.nextRunAtMs),
      oldest_queued_age_seconds: seconds(nowMs - item.receivedAtMs),
      ready_lag_seconds: seconds(nowMs - item.nextRunAtMs),
    })),
  };
}

/** `states` is a comma list of queued, leased, dead; default all three; unknown or empty entries are 400. */
export function parseBacklogStates(text: string | null): BacklogState[] {
  if (text === null) return [...BACKLOG_STATES];
  const states: BacklogState[] = [];
  for (const part of text.split(",")) {
    const state = part.trim();
    if (!(BACKLOG_STATES as readonly string[]).includes(state)) {
      throw invalidQuery(`states must be a comma list of ${BACKLOG_STATES.join(", ")}, got ${JSON.stringify(part)}`);
    }
    if (!states.includes(state as BacklogState)) states.push(state as BacklogState);
  }
  return states;
}

export async function agingSummary(request: AdminRequest): Promise<unknown> {
  const query = new QueryReader(request.query, ["route", "target", "states", "limit"]);
  const selector = selectorOf(query);
  const states = parseBacklogStates(request.query.get("states"));
  const report = await request.deps.store.agingSummary(selector, states, query.limit());
  const nowMs = request.deps.clock.now();
  return {
    queue_total: report.queueTotal,
    queued_total: report.queuedTotal,
    limit: report.limit,
    states: report.states,
    age_sample_count: report.ageSampleCount,
    age_windows: report.ageWindows,
    ...(report.agePercentilesSeconds ? { age_percentiles_seconds: report.agePercentilesSeconds } : {}),
    scanned: report.scanned,
    bucket_count: report.bucketCount,
    truncated: report.truncated,
    source_bounded: report.sourceBounded,
    ...ageFields(nowMs, report.oldestQueuedReceivedAtMs, report.earliestQueuedNextRunAtMs),
    selector: selectorJson(selector),
    items: report.items.map((bucket) => ({
      route: bucket.route,
      target: bucket.target,
      total_observed: bucket.totalObserved,
      queued_observed: bucket.stateCounts.queued,
      leased_observed: bucket.stateCounts.leased,
      dead_observed: bucket.stateCounts.dead,
      state_counts: bucket.stateCounts,
      age_sample_count: bucket.ageSampleCount,
      age_windows: bucket.ageWindows,
      ...(bucket.agePercentilesSeconds ? { age_percentiles_seconds: bucket.agePercentilesSeconds } : {}),
      ...(bucket.oldestQueuedReceivedAtMs !== null ? { oldest_queued_received_at: formatRfc3339(bucket.oldestQueuedReceivedAtMs) } : {}),
      ...(bucket.newestQueuedReceivedAtMs !== null ? { newest_queued_received_at: formatRfc3339(bucket.newestQueuedReceivedAtMs) } : {}),
      ...(bucket.earliestQueuedNextRunAtMs !== null ? { earliest_queued_next_run_at: formatRfc3339(bucket.earliestQueuedNextRunAtMs) } : {}),
      ready_overdue_count: bucket.readyOverdueCount,
      ...(bucket.maxReadyLagMs !== null ? { max_ready_lag_seconds: seconds(bucket.maxReadyLagMs) } : {}),
    })),
  };
}

export interface TrendsWindow {
  windowMs: number;
  stepMs: number;
  untilMs: number;
}

/** window (default 1h, at most 168h), step (default 5m, 1m..1h), until (RFC 3339, default now). */
export function parseTrendsWindow(query: QueryReader, nowMs: number): TrendsWindow {
  const windowMs = query.durationMs("window") ?? TRENDS_DEFAULT_WINDOW_MS;
  if (windowMs <= 0 || windowMs > TRENDS_MAX_WINDOW_MS) throw invalidQuery("window must be more than 0 and at most 168h");
  const stepMs = query.durationMs("step") ?? TRENDS_DEFAULT_STEP_MS;
  if (stepMs < TRENDS_MIN_STEP_MS || stepMs > TRENDS_MAX_STEP_MS) throw invalidQuery("step must be from 1m to 1h");
  const untilMs = query.instant("until") ?? nowMs;
  return { windowMs, stepMs, untilMs };
}

export async function trends(request: AdminRequest): Promise<unknown> {
  const query = new QueryReader(request.query, ["route", "target", "window", "step", "until"]);
  const selector = selectorOf(query);
  const nowMs = request.deps.clock.now();
  const window = parseTrendsWindow(query, nowMs);
  const report = await request.deps.store.trends({ ...selector, ...window });
  const signals = trendSignalsJson(await computeTrendSignals(request.deps.store, selector, request.config.defaults.trendSignals, window.untilMs));
  return {
    window: `${Math.round(report.windowMs / 1000)}s`,
    step: `${Math.round(report.stepMs / 1000)}s`,
    since: formatRfc3339(report.sinceMs),
    until: formatRfc3339(report.untilMs),
    sample_count: report.sampleCount,
    point_count: report.pointCount,
    non_empty_point_count: report.nonEmptyPointCount,
    truncated: report.truncated,
    ...(report.latestCapturedAtMs !== null ? { latest_captured_at: formatRfc3339(report.latestCapturedAtMs) } : {}),
    latest_total: report.latestTotal,
    max_total: report.maxTotal,
    selector: selectorJson(selector),
    signals,
    operator_actions: signals.operator_actions,
    items: report.items.map((point) => ({
      bucket_start: formatRfc3339(point.bucketStartMs),
      bucket_end: formatRfc3339(point.bucketEndMs),
      sample_count: point.sampleCount,
      ...(point.lastCapturedAtMs !== null ? { last_captured_at: formatRfc3339(point.lastCapturedAtMs) } : {}),
      queued_last: point.queuedLast,
      leased_last: point.leasedLast,
      dead_last: point.deadLast,
      total_last: point.totalLast,
      queued_max: point.queuedMax,
      leased_max: point.leasedMax,
      dead_max: point.deadMax,
      total_max: point.totalMax,
    })),
  };
}
