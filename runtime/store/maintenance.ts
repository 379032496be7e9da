// Background upkeep every backend gets from openStore: retention pruning every prune interval and
// trend samples every sample interval. Real-time timers (unref'd, so they never hold the process
// open); the work itself reads the injected clock.
import type { StoreSchedule } from "./options.js";
import type { Store } from "./store.js";

export interface MaintenanceErrors {
  (task: "prune" | "trend_sample", error: unknown): void;
}

export function startMaintenance(store: Store, schedule: StoreSchedule, onError: MaintenanceErrors): () => void {
  const timers: NodeJS.Timeout[] = [];
  const every = (ms: number | undefined, task: "prune" | "trend_sample", run: () => Promise<unknown>, atStart = false) => {
    if (!ms || ms <= 0) return;
    let running = false;
    const tick = () => {
      // A slow prune must not pile up behind itself.
      if (running) return;
      running = true;
      run().then(
        () => (running = false),
        (error) => {
          running = false;
          onError(task, error);
        },
      );
    };
    const timer = setInterval(tick, ms);
    timer.unref();
    timers.push(timer);
    if (atStart) tick();
  };
  every(schedule.pruneIntervalMs, "prune", () => store.prune());
  // The first trend sample is taken at start: without one, the trend signals would report
  // sampling_stale (a critical operator action) for the whole first capture interval.
  every(schedule.trendSampleIntervalMs, "trend_sample", () => store.captureTrendSample(), true);
  return () => timers.forEach((t) => clearInterval(t));
}
