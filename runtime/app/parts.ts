// The steps of start() that build the app's parts from the config: the metrics, the store (its
// calls and events reported to the metrics and the runtime log), the HTTP options of every
// listener, the metrics listener, and the addresses start() reports.
import type { SpoolConfig } from "../../compiler/ir.js";
import type { Clock } from "../time/clock.js";
import type { RunningListener } from "../http/listeners.js";
import { listenerName, parserHeaderLimit } from "../http/listeners.js";
import { createHttpServer, DEFAULT_HTTP_TIMEOUTS, type HttpListener, type HttpServerOptions } from "../http/server.js";
import type { RuntimeLogger } from "../observability/log.js";
import { metricsHandler } from "../observability/metrics-endpoint.js";
import { createMetrics, type QueueSnapshot, type SpoolMetrics } from "../observability/metrics.js";
import { storeMetricsObserver, type MemoryFootprint } from "../observability/store-metrics.js";
import { openStore } from "../store/open.js";
import { storeSpecFor } from "../store/spec.js";
import type { Store } from "../store/store.js";
import { startTracing, type Tracing } from "../tracing/tracing.js";
import type { AppDeps, BoundAddress } from "./types.js";

export function appMetrics(config: SpoolConfig, deps: AppDeps, clock: Clock, logger: RuntimeLogger, queueSnapshot: () => Promise<QueueSnapshot>): SpoolMetrics {
  return createMetrics({
    backend: config.backend,
    version: deps.version,
    clock,
    queueSnapshot,
    // The queue stats source is the one cache (≤2 s stale, docs/decisions.md D32); a second 2 s
    // cache in the metrics would let gauges lag by up to 4 s. Scrape-level reuse stays.
    snapshotMaxAgeMs: 0,
    onSnapshotError: (error) => logger.warn("queue_snapshot_failed", { error }),
  });
}

export function openAppStore(config: SpoolConfig, deps: AppDeps, clock: Clock, metrics: SpoolMetrics, logger: RuntimeLogger, memoryFootprint: MemoryFootprint): Promise<Store> {
  const open = deps.openStore ?? openStore;
  return open(storeSpecFor(config, deps.storeLocation), {
    clock,
    observer: storeMetricsObserver(metrics, memoryFootprint),
    onMaintenanceError: (task, error) => logger.warn("store_maintenance_failed", { task, error }),
    onClockSkew: (skewMs) =>
      logger.warn("clock_skew", {
        skew_ms: skewMs,
        detail: "this host's clock differs from the PostgreSQL server's; instances sharing the database need agreeing clocks (NTP) for leases and wake-ups",
      }),
  });
}

export function httpOptionsFor(config: SpoolConfig, deps: AppDeps, logger: RuntimeLogger): HttpServerOptions {
  return {
    ...DEFAULT_HTTP_TIMEOUTS,
    maxHeaderSize: parserHeaderLimit(config),
    onUnexpectedError: (error, req) => logger.error("request_failed", { method: req.method, path: req.url?.split("?")[0], error }),
    ...deps.http,
  };
}

/** The metrics listener (`observability { metrics }`), always one of its own; undefined when metrics are off. */
export async function listenMetrics(config: SpoolConfig, metrics: SpoolMetrics, httpOptions: HttpServerOptions): Promise<HttpListener | undefined> {
  const metricsConfig = config.observability.metrics;
  if (!metricsConfig.enabled) return undefined;
  const server = createHttpServer(metricsHandler(metrics.registry, { path: metricsConfig.prefix }), httpOptions);
  return server.listen({ host: metricsConfig.listen.host === "" ? undefined : metricsConfig.listen.host, port: metricsConfig.listen.port });
}

export function boundAddresses(listeners: readonly RunningListener[], metricsListener: HttpListener | undefined): BoundAddress[] {
  const addresses: BoundAddress[] = listeners.map(({ plan, listener }) => ({
    name: listenerName(plan),
    host: listener.address.host,
    port: listener.address.port,
  }));
  if (metricsListener) addresses.push({ name: "metrics", host: metricsListener.address.host, port: metricsListener.address.port });
  return addresses;
}

/** Tracing from `observability { tracing }`, its failures counted and logged; spool_tracing_enabled says whether it runs. */
export function appTracing(config: SpoolConfig, deps: AppDeps, metrics: SpoolMetrics, logger: RuntimeLogger): Tracing {
  const tracing = startTracing(config.observability.tracing, {
    version: deps.version,
    onInitFailure: (error) => {
      metrics.tracing.initFailures.inc();
      logger.error("tracing_init_failed", { error, detail: "tracing stays off until a restart with a config it can use" });
    },
    onExportFailure: (failure) => {
      metrics.tracing.exportErrors.inc();
      logger.warn("tracing_export_failed", { reason: failure.reason, spans: failure.spans, attempts: failure.attempts });
    },
    onDropped: (spans) => metrics.tracing.spansDropped.inc(spans),
  });
  metrics.tracing.enabled.set(tracing.enabled ? 1 : 0);
  return tracing;
}
