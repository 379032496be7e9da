// Backlog trend signals and the operator actions they call for (`defaults.trend_signals`,
// docs/spoolfile.md; docs/decisions.md D53). Pure: samples and thresholds in, signals out.
import type { TrendSignals } from "../../compiler/ir.js";

export interface BacklogSample {
  capturedAtMs: number;
  queued: number;
  leased: number;
  dead: number;
}

export type TrendAlert = "sampling_stale" | "sustained_growth" | "recent_surge" | "dead_share_high" | "queued_pressure";

export interface OperatorAction {
  id: string;
  severity: "warn" | "critical";
  alert_routing_key: string;
  summary: string;
  playbook: string;
  alerts: TrendAlert[];
  admin_endpoints: string[];
}

export interface TrendSignalReport {
  status: "ok" | "warn";
  windowMs: number;
  sinceMs: number;
  untilMs: number;
  sampleCount: number;
  latestCapturedAtMs: number | null;
  latestQueued: number;
  latestLeased: number;
  latestDead: number;
  latestTotal: number;
  /** Rounded mean total of the samples before the latest (the latest itself when it is alone). */
  baselineTotal: number;
  deltaTotal: number;
  deltaPercent: number;
  /** Total change per minute between the first and the latest sample, to one decimal. */
  growthRatePerMinute: number;
  /** Sample-to-sample increases of the total ending at the latest sample. */
  consecutiveIncreases: number;
  deadSharePercent: number;
  queuedSharePercent: number;
  freshnessSeconds: number;
  activeAlerts: TrendAlert[];
  operatorActions: OperatorAction[];
}

const totalOf = (s: BacklogSample) => s.queued + s.leased + s.dead;
const percentOf = (part: number, total: number) => (part <= 0 || total <= 0 ? 0 : Math.round((part * 100) / total));

/**
 * Signals over the samples captured in (untilMs - config.windowMs, untilMs]. No sample at all, or a
 * latest sample older than expected_capture_interval × stale_grace_factor, is `sampling_stale`: the
 * other signals cannot be trusted then.
 */
export function analyzeTrendSignals(samples: readonly BacklogSample[], config: TrendSignals, untilMs: number): TrendSignalReport {
  const sinceMs = untilMs - config.windowMs;
  const inWindow = samples.filter((s) => s.capturedAtMs >= sinceMs && s.capturedAtMs <= untilMs).sort((a, b) => a.capturedAtMs - b.capturedAtMs);
  const report: TrendSignalReport = {
    status: "ok",
    windowMs: config.windowMs,
    sinceMs,
    untilMs,
    sampleCount: inWindow.length,
    latestCapturedAtMs: null,
    latestQueued: 0,
    latestLeased: 0,
    latestDead: 0,
    latestTotal: 0,
    baselineTotal: 0,
    deltaTotal: 0,
    deltaPercent: 0,
    growthRatePerMinute: 0,
    consecutiveIncreases: 0,
    deadSharePercent: 0,
    queuedSharePercent: 0,
    freshnessSeconds: Math.floor(config.windowMs / 1000),
    activeAlerts: [],
    operatorActions: [],
  };
  if (inWindow.length === 0) return finish(report, { sampling_stale: true });

  const latest = inWindow[inWindow.length - 1];
  const latestTotal = totalOf(latest);
  const history = inWindow.slice(0, -1);
  report.latestCapturedAtMs = latest.capturedAtMs;
  report.latestQueued = latest.queued;
  report.latestLeased = latest.leased;
  report.latestDead = latest.dead;
  report.latestTotal = latestTotal;
  report.deadSharePercent = percentOf(latest.dead, latestTotal);
  report.queuedSharePercent = percentOf(latest.queued, latestTotal);
  report.baselineTotal = history.length === 0 ? latestTotal : Math.round(history.reduce((sum, s) => sum + totalOf(s), 0) / history.length);
  report.deltaTotal = latestTotal - report.baselineTotal;
  report.deltaPercent = report.baselineTotal > 0 ? Math.round((report.deltaTotal * 100) / report.baselineTotal) : latestTotal > 0 ? 100 : 0;
  const elapsedMs = latest.capturedAtMs - inWindow[0].capturedAtMs;
  if (elapsedMs > 0) report.growthRatePerMinute = Math.round(((latestTotal - totalOf(inWindow[0])) / (elapsedMs / 60_000)) * 10) / 10;
  for (let i = inWindow.length - 1; i > 0 && totalOf(inWindow[i]) > totalOf(inWindow[i - 1]); i--) report.consecutiveIncreases++;

  const sustainedGrowth =
    report.consecutiveIncreases >= config.sustainedGrowthConsecutive ||
    (inWindow.length >= config.sustainedGrowthMinSamples && report.deltaTotal > 0 && report.deltaTotal >= config.sustainedGrowthMinDelta);
  let recentSurge: boolean;
  if (report.baselineTotal <= 0) {
    recentSurge = latestTotal >= config.recentSurgeMinTotal;
  } else {
    const rise = Math.max(config.recentSurgeMinDelta, Math.ceil((report.baselineTotal * config.recentSurgePercent) / 100));
    recentSurge = latestTotal >= Math.max(config.recentSurgeMinTotal, report.baselineTotal + rise);
  }
  const deadShareHigh = latestTotal >= config.deadShareHighMinTotal && report.deadSharePercent >= config.deadShareHighPercent;
  const queuedPressure =
    latestTotal >= config.queuedPressureMinTotal &&
    report.queuedSharePercent >= config.queuedPressurePercent &&
    latest.queued >= latest.leased * config.queuedPressureLeasedMultiplier;
  const ageMs = untilMs - latest.capturedAtMs;
  report.freshnessSeconds = Math.max(0, Math.floor(ageMs / 1000));
  const samplingStale = ageMs > config.expectedCaptureIntervalMs * config.staleGraceFactor;
  return finish(report, {
    sampling_stale: samplingStale,
    sustained_growth: sustainedGrowth,
    recent_surge: recentSurge,
    dead_share_high: deadShareHigh,
    queued_pressure: queuedPressure,
  });
}

const ALERT_ORDER: readonly TrendAlert[] = ["sampling_stale", "sustained_growth", "recent_surge", "dead_share_high", "queued_pressure"];

function finish(report: TrendSignalReport, active: Partial<Record<TrendAlert, boolean>>): TrendSignalReport {
  report.activeAlerts = ALERT_ORDER.filter((alert) => active[alert]);
  report.status = report.activeAlerts.length > 0 ? "warn" : "ok";
  report.operatorActions = operatorActionsFor(report.activeAlerts);
  return report;
}

/** What an operator should do about each active alert, most urgent first. */
export function operatorActionsFor(alerts: readonly TrendAlert[]): OperatorAction[] {
  const has = (alert: TrendAlert) => alerts.includes(alert);
  const actions: OperatorAction[] = [];
  if (has("sampling_stale")) {
    actions.push({
      id: "sampling_stale_recover",
      severity: "critical",
      alert_routing_key: "spool.backlog.sampling_stale",
      summary: "Backlog trend sampling is stale; trend diagnostics are incomplete.",
      playbook: "Check the process health and the trend sampler, then restore sample capture before acting on trend signals.",
      alerts: ["sampling_stale"],
      admin_endpoints: ["/healthz?details=1", "/backlog/trends"],
    });
  }
  if (has("queued_pressure")) {
    actions.push({
      id: "queued_pressure_relieve",
      severity: "critical",
      alert_routing_key: "spool.backlog.queued_pressure",
      summary: "Queued backlog is high relative to the work in progress.",
      playbook: "Find the hottest route/target, check consumer and delivery throughput, and preview any scoped filter mutation before running it.",
      alerts: ["queued_pressure"],
      admin_endpoints: ["/backlog/top_queued", "/backlog/oldest_queued", "/messages", "/attempts", "/messages/cancel_by_filter"],
    });
  }
  if (has("dead_share_high")) {
    actions.push({
      id: "dead_share_drain",
      severity: "warn",
      alert_routing_key: "spool.backlog.dead_share_high",
      summary: "The dead-letter share of the backlog is high.",
      playbook: "Read recent delivery attempts and the DLQ, fix the destination or policy, then requeue only the dead letters you have checked.",
      alerts: ["dead_share_high"],
      admin_endpoints: ["/attempts", "/dlq", "/dlq/requeue"],
    });
  }
  if (has("sustained_growth") || has("recent_surge")) {
    const surge = has("recent_surge");
    actions.push({
      id: "backlog_growth_triage",
      severity: surge ? "critical" : "warn",
      alert_routing_key: surge ? "spool.backlog.recent_surge" : "spool.backlog.sustained_growth",
      summary: surge ? "Recent backlog surge detected." : "Sustained backlog growth detected.",
      playbook: surge
        ? "Triage the hotspot and the delivery path now; use bounded, previewed filter mutations to stop uncontrolled growth."
        : "Inspect growth hotspots and the backlog age profile, then add drain capacity or apply scoped backlog controls.",
      alerts: alerts.filter((a): a is TrendAlert => a === "sustained_growth" || a === "recent_surge"),
      admin_endpoints: ["/backlog/top_queued", "/backlog/aging_summary", "/backlog/trends", "/messages"],
    });
  }
  return actions;
}

/** The JSON form used by /backlog/trends (`signals`) and health details. */
export function trendSignalsJson(report: TrendSignalReport): Record<string, unknown> {
  const json: Record<string, unknown> = {
    status: report.status,
    window: `${Math.round(report.windowMs / 1000)}s`,
    since: new Date(report.sinceMs).toISOString(),
    until: new Date(report.untilMs).toISOString(),
    sample_count: report.sampleCount,
    latest_total: report.latestTotal,
    latest_queued: report.latestQueued,
    latest_leased: report.latestLeased,
    latest_dead: report.latestDead,
    baseline_total: report.baselineTotal,
    delta_total: report.deltaTotal,
    delta_percent: report.deltaPercent,
    growth_rate_per_minute: report.growthRatePerMinute,
    consecutive_increases: report.consecutiveIncreases,
    dead_share_percent: report.deadSharePercent,
    queued_share_percent: report.queuedSharePercent,
    freshness_seconds: report.freshnessSeconds,
    active_alerts: report.activeAlerts,
    operator_actions: report.operatorActions,
  };
  if (report.latestCapturedAtMs !== null) json.latest_captured_at = new Date(report.latestCapturedAtMs).toISOString();
  return json;
}
