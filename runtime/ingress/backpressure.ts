// Adaptive backpressure (`defaults { adaptive_backpressure { … } }`, docs/spoolfile.md):
// once the queue holds at least min_total messages, ingress answers 503 when queued messages fill
// queued_percent of max_depth, when the most overdue ready message waits ready_lag, when the oldest
// queued message is oldest_queued_age old, or (sustained_growth on) when the queue grew in each of
// the last few snapshots. backpressureReason is pure: the caller passes the figures and their
// history; currentBackpressure reads them from the cached queue stats.
import type { AdaptiveBackpressure, SpoolConfig } from "../../compiler/ir.js";
import type { QueueStatsSource } from "../observability/queue-stats.js";

export type BackpressureReason = "queued_pressure" | "ready_lag" | "oldest_queued_age" | "sustained_growth";

export interface QueueFigures {
  total: number;
  queued: number;
  readyLagMs: number | null;
  oldestQueuedAgeMs: number | null;
}

export interface GrowthSettings {
  /** Consecutive growing snapshots that count as sustained growth (trend_signals sustained_growth_consecutive). */
  consecutive: number;
  /** Total growth over those snapshots that counts (trend_signals sustained_growth_min_delta). */
  minDelta: number;
}

export function backpressureReason(
  settings: AdaptiveBackpressure,
  maxDepth: number,
  figures: QueueFigures,
  totalHistory: readonly number[],
  growth: GrowthSettings,
): BackpressureReason | null {
  if (!settings.enabled || figures.total < settings.minTotal) return null;
  if (maxDepth > 0 && figures.queued * 100 >= settings.queuedPercent * maxDepth) return "queued_pressure";
  if (figures.readyLagMs !== null && settings.readyLagMs > 0 && figures.readyLagMs >= settings.readyLagMs) return "ready_lag";
  if (figures.oldestQueuedAgeMs !== null && settings.oldestQueuedAgeMs > 0 && figures.oldestQueuedAgeMs >= settings.oldestQueuedAgeMs) {
    return "oldest_queued_age";
  }
  if (settings.sustainedGrowth && isSustainedGrowth(totalHistory, growth)) return "sustained_growth";
  return null;
}

/**
 * The verdict for the config serving now, from the cached queue stats (cheap, synchronous: run per
 * request). Off, or with no stats fresh enough, there is none; the stats are not even looked at
 * when it is off.
 */
export function currentBackpressure(config: SpoolConfig, queueStats: Pick<QueueStatsSource, "peek" | "totalHistory">): BackpressureReason | null {
  if (!config.defaults.adaptiveBackpressure.enabled) return null;
  const stats = queueStats.peek();
  if (!stats) return null;
  const signals = config.defaults.trendSignals;
  return backpressureReason(
    config.defaults.adaptiveBackpressure,
    config.queueLimits.maxDepth,
    { total: stats.total, queued: stats.byState.queued, readyLagMs: stats.readyLagMs, oldestQueuedAgeMs: stats.oldestQueuedAgeMs },
    queueStats.totalHistory(),
    { consecutive: signals.sustainedGrowthConsecutive, minDelta: signals.sustainedGrowthMinDelta },
  );
}

/** True when each of the last `consecutive` steps grew and together they grew by at least minDelta. */
export function isSustainedGrowth(history: readonly number[], growth: GrowthSettings): boolean {
  const steps = Math.max(1, growth.consecutive);
  if (history.length < steps + 1) return false;
  const window = history.slice(-(steps + 1));
  for (let i = 1; i < window.length; i++) if (window[i] <= window[i - 1]) return false;
  return window[window.length - 1] - window[0] >= growth.minDelta;
}
