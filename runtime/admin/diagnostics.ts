// The trend signals the app's /healthz?details=1 adds (docs/api.md "Admin API"). The
// Admin trends endpoint uses the same function.
import type { TrendSignals } from "../../compiler/ir.js";
import type { Selector } from "../store/records.js";
import type { Store } from "../store/store.js";
import { analyzeTrendSignals, type BacklogSample, type TrendSignalReport } from "./trend-signals.js";

const MAX_SIGNAL_POINTS = 10_080;

/**
 * Reads the trend samples of the signal window (one rollup point per capture interval, keeping the
 * last capture of each) and analyses them.
 */
export async function computeTrendSignals(store: Store, selector: Selector, config: TrendSignals, untilMs: number): Promise<TrendSignalReport> {
  const stepMs = Math.max(config.expectedCaptureIntervalMs, Math.ceil(config.windowMs / MAX_SIGNAL_POINTS), 1);
  // until is exclusive in the rollup; +1 ms keeps a capture made exactly at untilMs.
  const rollup = await store.trends({ ...selector, windowMs: config.windowMs + 1, stepMs, untilMs: untilMs + 1 });
  const samples: BacklogSample[] = rollup.items
    .filter((point) => point.sampleCount > 0 && point.lastCapturedAtMs !== null)
    .map((point) => ({ capturedAtMs: point.lastCapturedAtMs as number, queued: point.queuedLast, leased: point.leasedLast, dead: point.deadLast }));
  return analyzeTrendSignals(samples, config, untilMs);
}

/** Health details' `trend_signals {signals, operator_actions}` (signals are the active alert names). */
export function healthTrendSignals(report: TrendSignalReport): { status: string; signals: string[]; operator_actions: unknown[] } {
  return { status: report.status, signals: [...report.activeAlerts], operator_actions: report.operatorActions };
}
