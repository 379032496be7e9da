// What the metrics read from the store: its calls and events as they happen (storeMetricsObserver,
// the store's StoreObserver hook), and the queue snapshot behind the queue gauges at scrape time.
import type { StoreObserver } from "../store/observer.js";
import type { MemoryStoreStats, QueueStats } from "../store/reports.js";
import type { QueueSnapshot, SpoolMetrics } from "./metrics.js";
import type { CounterSeries, HistogramSeries } from "./series.js";

/** Where the memory backend's footprint reader lands (the store hands it over once, at open). */
export interface MemoryFootprint {
  stats: () => MemoryStoreStats | null;
}

/** The store's calls and events as metrics; the memory backend's footprint reader lands in `memoryFootprint`. */
export function storeMetricsObserver(metrics: SpoolMetrics, memoryFootprint: MemoryFootprint): StoreObserver {
  const backend = metrics.backend;
  // Every store call lands here (one per ingress request): its series are looked up once per operation name.
  const seriesByOperation = new Map<string, { count: CounterSeries; seconds: HistogramSeries }>();
  const seriesOf = (operation: string) => {
    let series = seriesByOperation.get(operation);
    if (!series) {
      const labels = { backend, operation };
      series = { count: metrics.store.operations.series(labels), seconds: metrics.store.operationSeconds.series(labels) };
      seriesByOperation.set(operation, series);
    }
    return series;
  };
  return {
    operation(name, seconds, errorKind) {
      const series = seriesOf(name);
      series.count.inc();
      series.seconds.observe(seconds);
      if (errorKind !== undefined) metrics.store.errors.inc({ backend, operation: name, kind: errorKind });
      if (name === "dequeue") metrics.sqlite?.dequeueSeconds.observe(seconds);
    },
    memoryStats(read) {
      memoryFootprint.stats = read;
    },
    dropped(messages) {
      metrics.queue.dropped.inc(messages);
      metrics.memory?.evictions.inc({ reason: "drop_oldest" }, messages);
    },
    sqliteEvent(event, seconds) {
      const sqlite = metrics.sqlite;
      if (!sqlite) return;
      switch (event) {
        case "tx_commit":
          sqlite.txCommit.inc();
          if (seconds !== undefined) sqlite.writeSeconds.observe(seconds);
          return;
        case "tx_rollback":
          sqlite.txRollback.inc();
          return;
        case "busy":
          sqlite.busy.inc();
          return;
        case "retry":
          sqlite.retry.inc();
          return;
        case "checkpoint":
          sqlite.checkpoint.inc();
          if (seconds !== undefined) sqlite.checkpointSeconds.observe(seconds);
          return;
        case "checkpoint_error":
          sqlite.checkpointErrors.inc();
          return;
      }
    },
  };
}

/**
 * What the queue gauges show, from the cached queue stats (observability/queue-stats.ts) and the
 * memory backend's footprint; `leasesActiveByRoute` maps the leased counts to the pull routes
 * serving now (the Pull API's view, passed in by the app).
 */
export function queueSnapshotOf(
  data: QueueStats,
  memory: MemoryStoreStats | null,
  leasesActiveByRoute: (leasedByRoute: QueueStats["leasedByRoute"]) => Readonly<Record<string, number>>,
): QueueSnapshot {
  return {
    depth: { queued: data.byState.queued, leased: data.byState.leased, dead: data.byState.dead },
    oldestQueuedAgeSeconds: (data.oldestQueuedAgeMs ?? 0) / 1000,
    readyLagSeconds: (data.readyLagMs ?? 0) / 1000,
    leasesActiveByRoute: leasesActiveByRoute(data.leasedByRoute),
    memory: memory ? { itemsByState: memory.itemsByState, retainedBytesByState: memory.retainedBytesByState, retainedBytesTotal: memory.retainedBytesTotal } : undefined,
  };
}
