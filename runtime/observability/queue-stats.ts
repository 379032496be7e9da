// One cached view of the queue for everything that reads it per request or per scrape: health
// details, the queue gauges and adaptive backpressure. Loaded at most once per second under load,
// never served more than 2 s stale (docs/decisions.md D32): when the store cannot answer,
// readers get the failure (health details report queue.ok false, the gauges read NaN).
import type { Clock } from "../time/clock.js";
import type { QueueStats } from "../store/reports.js";
import type { Store } from "../store/store.js";
import { StaleWhileRefreshCache } from "./stale-cache.js";

export const STATS_REFRESH_AFTER_MS = 1_000;
export const STATS_MAX_AGE_MS = 2_000;
const HISTORY_LENGTH = 16;

export interface QueueStatsSource {
  /** Fresh or at most 2 s stale; rejects when the store has not answered within that bound. */
  get(): Promise<{ data: QueueStats; loadedAtMs: number }>;
  /**
   * The last stats without waiting (starts a refresh when they are getting old); undefined before
   * the first load and once they are older than the 2 s bound (adaptive backpressure then has no
   * verdict rather than one from old figures).
   */
  peek(): QueueStats | undefined;
  /** Queue totals sampled at least `sampleIntervalMs` apart, oldest first (sustained-growth signal). */
  totalHistory(): readonly number[];
}

export function createQueueStatsSource(
  store: Store,
  clock: Clock,
  options: { sampleIntervalMs: number; onError?: (error: unknown) => void },
): QueueStatsSource {
  const history: number[] = [];
  let lastSampleAtMs = Number.NEGATIVE_INFINITY;
  const cache = new StaleWhileRefreshCache(
    async () => {
      const stats = await store.queueStats();
      const nowMs = clock.now();
      if (nowMs - lastSampleAtMs >= options.sampleIntervalMs) {
        lastSampleAtMs = nowMs;
        history.push(stats.total);
        if (history.length > HISTORY_LENGTH) history.shift();
      }
      return stats;
    },
    { refreshAfterMs: STATS_REFRESH_AFTER_MS, maxAgeMs: STATS_MAX_AGE_MS, clock, onError: options.onError },
  );
  return {
    get: () => cache.get(),
    peek() {
      const current = cache.peek();
      const ageMs = current ? clock.now() - current.loadedAtMs : Infinity;
      if (ageMs >= STATS_REFRESH_AFTER_MS) void cache.get().catch(() => undefined);
      return ageMs < STATS_MAX_AGE_MS ? current?.data : undefined;
    },
    totalHistory: () => history,
  };
}
