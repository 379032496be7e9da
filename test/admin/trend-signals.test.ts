import { suite } from "uvu";
import * as assert from "uvu/assert";
import { analyzeTrendSignals, operatorActionsFor, type BacklogSample } from "../../runtime/admin/trend-signals.js";
import { DEFAULT_TREND_SIGNALS as CONFIG } from "./ir-builder.js";

const MINUTE = 60_000;
const UNTIL = Date.UTC(2030, 0, 1, 12);

/** Samples one minute apart ending at UNTIL (the last one captured exactly at UNTIL). */
function series(rows: [queued: number, leased: number, dead: number][], lastAtMs = UNTIL): BacklogSample[] {
  return rows.map(([queued, leased, dead], i) => ({ capturedAtMs: lastAtMs - (rows.length - 1 - i) * MINUTE, queued, leased, dead }));
}

const signals = suite("trend signals");

signals("no samples in the window is sampling_stale with the recover action", () => {
  const report = analyzeTrendSignals([{ capturedAtMs: UNTIL - 16 * MINUTE, queued: 5, leased: 0, dead: 0 }], CONFIG, UNTIL);
  assert.is(report.sampleCount, 0);
  assert.is(report.status, "warn");
  assert.equal(report.activeAlerts, ["sampling_stale"]);
  assert.is(report.freshnessSeconds, 900);
  assert.equal(report.operatorActions.map((a) => [a.id, a.severity]), [["sampling_stale_recover", "critical"]]);
});

signals("a steady small backlog is ok with no actions", () => {
  const report = analyzeTrendSignals(series([[5, 1, 0], [5, 1, 0], [5, 1, 0]]), CONFIG, UNTIL);
  assert.is(report.status, "ok");
  assert.equal(report.activeAlerts, []);
  assert.equal(report.operatorActions, []);
  assert.equal([report.baselineTotal, report.deltaTotal, report.deltaPercent, report.growthRatePerMinute], [6, 0, 0, 0]);
});

signals("rising totals are sustained growth and, past the surge threshold, a recent surge", () => {
  const report = analyzeTrendSignals(series([[10, 0, 0], [20, 0, 0], [30, 0, 0], [40, 0, 0], [50, 0, 0]]), CONFIG, UNTIL);
  // baseline mean(10..40) = 25; surge threshold = 25 + max(10, ceil(25 * 50%)) = 38; 50 ≥ 38.
  assert.equal([report.baselineTotal, report.deltaTotal, report.deltaPercent], [25, 25, 100]);
  assert.is(report.consecutiveIncreases, 4);
  assert.is(report.growthRatePerMinute, 10);
  assert.equal(report.activeAlerts, ["sustained_growth", "recent_surge", "queued_pressure"]);
  const growth = report.operatorActions.find((a) => a.id === "backlog_growth_triage");
  assert.equal([growth?.severity, growth?.alerts], ["critical", ["sustained_growth", "recent_surge"]]);
});

signals("growth below the surge threshold is sustained growth only, at warn severity", () => {
  const report = analyzeTrendSignals(series([[10, 10, 0], [11, 10, 0], [12, 10, 0], [13, 10, 0]]), CONFIG, UNTIL);
  assert.equal(report.activeAlerts, ["sustained_growth"]);
  assert.equal(report.operatorActions.map((a) => [a.id, a.severity]), [["backlog_growth_triage", "warn"]]);
});

signals("a high dead share is dead_share_high; queued pressure needs both share and the leased multiple", () => {
  const dead = analyzeTrendSignals(series([[40, 30, 30]]), CONFIG, UNTIL);
  assert.equal([dead.deadSharePercent, dead.queuedSharePercent], [30, 40]);
  assert.equal(dead.activeAlerts, ["dead_share_high"]);
  assert.equal(dead.operatorActions.map((a) => a.id), ["dead_share_drain"]);
  const pressure = analyzeTrendSignals(series([[80, 10, 10]]), CONFIG, UNTIL);
  assert.equal(pressure.activeAlerts, ["queued_pressure"]);
  const busyWorkers = analyzeTrendSignals(series([[80, 41, 0]]), { ...CONFIG, queuedPressurePercent: 60 }, UNTIL);
  assert.equal(busyWorkers.activeAlerts, [], "80 queued is less than 2 × 41 leased");
});

signals("a latest sample older than interval × grace factor is stale but still analysed", () => {
  const report = analyzeTrendSignals(series([[1, 0, 0], [1, 0, 0]], UNTIL - 4 * MINUTE), CONFIG, UNTIL);
  assert.equal(report.activeAlerts, ["sampling_stale"]);
  assert.is(report.freshnessSeconds, 240);
  const fresh = analyzeTrendSignals(series([[1, 0, 0], [1, 0, 0]], UNTIL - 3 * MINUTE), CONFIG, UNTIL);
  assert.equal(fresh.activeAlerts, [], "exactly 3 minutes old is not stale yet");
});

signals("thresholds come from the config", () => {
  const rows = series([[3, 0, 3]]);
  assert.equal(analyzeTrendSignals(rows, CONFIG, UNTIL).activeAlerts, [], "total 6 is under dead_share_high_min_total 10");
  assert.equal(analyzeTrendSignals(rows, { ...CONFIG, deadShareHighMinTotal: 5 }, UNTIL).activeAlerts, ["dead_share_high"]);
});

signals("operator actions are ordered most urgent first", () => {
  const ids = operatorActionsFor(["sampling_stale", "sustained_growth", "dead_share_high", "queued_pressure"]).map((a) => a.id);
  assert.equal(ids, ["sampling_stale_recover", "queued_pressure_relieve", "dead_share_drain", "backlog_growth_triage"]);
});

signals.run();
