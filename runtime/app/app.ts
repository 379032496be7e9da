// createApp: a compiled config in, a running Spool out. Wiring only: every part (store, listeners,
// ingress, Pull API, Admin API, metrics, logs, reload) is built by its own folder; this file
// starts them in order, hands reloads to runtime/reload/apply.ts, and stops them in order.
import type { SpoolConfig } from "../../compiler/ir.js";
import { systemClock } from "../time/clock.js";
import { planListeners, startListeners, type RunningListener } from "../http/listeners.js";
import type { HttpListener } from "../http/server.js";
import { createAccessLogger, type AccessLogger } from "../observability/access-log.js";
import { createRuntimeLogger } from "../observability/log.js";
import { recordIngressRejection } from "../observability/metrics.js";
import { createQueueStatsSource, type QueueStatsSource } from "../observability/queue-stats.js";
import { queueSnapshotOf, type MemoryFootprint } from "../observability/store-metrics.js";
import { activeLeasesByPullRoute } from "../pull/state.js";
import { applyReload, type ReloadOutcome } from "../reload/apply.js";
import type { Store } from "../store/store.js";
import { startRuntimeSecrets } from "./secrets.js";
import type { RuntimeSecrets } from "../secrets/pools.js";
import { grpcWorkerService } from "./grpc.js";
import { appPullOps, mountHandlers } from "./handlers.js";
import { createLiveState } from "./live.js";
import { appMetrics, appTracing, boundAddresses, httpOptionsFor, listenMetrics, openAppStore } from "./parts.js";
import { TRACING_OFF, type Tracing } from "../tracing/tracing.js";
import type { AppContext, AppDeps, AppService, BoundAddress, SpoolApp } from "./types.js";

export type { AppContext, AppDeps, AppService, BoundAddress, ReloadOutcome, SpoolApp } from "./types.js";

/** The default of stop(): running deliveries and requests in flight get this long (docs/decisions.md D54: 10 s, exit within 15 s). */
const DEFAULT_STOP_DEADLINE_MS = 10_000;
/** After the listeners and services stopped, the spans that wait get this long to reach the collector (within the exit budget). */
const TRACING_FLUSH_MS = 3_000;

export function createApp(initialConfig: SpoolConfig, deps: AppDeps): SpoolApp {
  const clock = deps.clock ?? systemClock;
  const shutdown = new AbortController();
  const live = createLiveState(initialConfig, deps.configFingerprint ?? null, clock);
  const logger =
    deps.logger ??
    createRuntimeLogger({ level: deps.logLevel ?? initialConfig.observability.runtimeLog.level, output: initialConfig.observability.runtimeLog.output, clock });
  let context: AppContext | undefined;
  let listeners: RunningListener[] = [];
  let metricsListener: HttpListener | undefined;
  let services: AppService[] = [];
  let accessLog: AccessLogger | undefined;
  let store: Store | undefined;
  let secrets: RuntimeSecrets | undefined;
  let tracing: Tracing = TRACING_OFF;
  let stopping: Promise<void> | undefined;
  // spool_stopped pairs with spool_started: a start that failed half way cleans up without claiming either.
  let started = false;

  const reload = (next: SpoolConfig, fingerprint: string | null): ReloadOutcome => {
    const outcome = applyReload({ current: () => live.current().config, swap: live.swap, listeners: () => listeners, services: () => services, logger }, next, fingerprint);
    if (outcome.applied) secrets?.reconfigure(next);
    return outcome;
  };

  async function start(): Promise<{ addresses: BoundAddress[] }> {
    const config = live.current().config;
    const plans = planListeners(config);
    const memoryFootprint: MemoryFootprint = { stats: () => null };
    let queueStats: QueueStatsSource | undefined;
    const metrics = appMetrics(config, deps, clock, logger, async () => {
      const { data } = await queueStats!.get();
      return queueSnapshotOf(data, memoryFootprint.stats(), (leased) => activeLeasesByPullRoute(live.current().pull, leased));
    });
    store = await openAppStore(config, deps, clock, metrics, logger, memoryFootprint);
    try {
      secrets = await startRuntimeSecrets(config, store, deps.secretKey ?? null, clock, metrics, logger);
    } catch (error) {
      // A stored version that cannot be opened (another key): the start stops, naming it.
      await store.close().catch(() => undefined);
      store = undefined;
      throw error;
    }
    tracing = appTracing(config, deps, metrics, logger);
    queueStats = createQueueStatsSource(store, clock, {
      sampleIntervalMs: config.defaults.trendSignals.expectedCaptureIntervalMs,
      onError: (error) => logger.warn("queue_stats_failed", { error }),
    });
    const appContext: AppContext = {
      store,
      metrics,
      logger,
      clock,
      queueStats,
      secrets,
      tracing,
      shutdownSignal: shutdown.signal,
      config: () => live.current().config,
      reload,
    };
    context = appContext;
    const pullOps = appPullOps(appContext, live);
    const handlers = mountHandlers(appContext, live, pullOps, memoryFootprint, deps);
    const grpc = grpcWorkerService(appContext, live, pullOps, () => accessLog);

    try {
      if (config.observability.accessLog.enabled) accessLog = createAccessLogger({ output: config.observability.accessLog.output, clock });
      const httpOptions = httpOptionsFor(config, deps, logger);
      listeners = await startListeners(plans, {
        http: httpOptions,
        handlers,
        accessLog,
        onIngressClientError: (status, code) => recordIngressRejection(metrics, code, status),
      });
      metricsListener = await listenMetrics(config, metrics, httpOptions);
      services = [...(grpc ? [grpc] : []), ...(deps.services ?? []).map((make) => make(appContext))];
      for (const service of services) await service.start();
    } catch (error) {
      await stop(0);
      throw error;
    }

    const addresses = [...boundAddresses(listeners, metricsListener), ...(grpc?.address() ? [grpc.address()!] : [])];
    started = true;
    logger.info("spool_started", { version: deps.version, backend: config.backend, listeners: addresses.map((a) => `${a.name}=${a.host}:${a.port}`) });
    return { addresses };
  }

  function stop(deadlineMs = DEFAULT_STOP_DEADLINE_MS): Promise<void> {
    stopping ??= (async () => {
      // Open long polls answer at once with empty items (docs/decisions.md D54).
      shutdown.abort(new Error("spool is stopping"));
      const closing: Promise<unknown>[] = listeners.map(({ listener }) => listener.close(deadlineMs));
      if (metricsListener) closing.push(metricsListener.close(Math.min(deadlineMs, 1_000)));
      closing.push(
        ...services.map((service) =>
          service.stop(deadlineMs).catch((error: unknown) => logger.error("service_stop_failed", { service: service.name, error })),
        ),
      );
      await Promise.all(closing);
      secrets?.stop();
      // The last spans (those of the requests and deliveries just finished) go out while the store closes.
      await Promise.all([
        tracing.shutdown(TRACING_FLUSH_MS),
        store?.close().catch((error: unknown) => logger.error("store_close_failed", { error })),
      ]);
      if (started) logger.info("spool_stopped", {});
      await accessLog?.close();
    })();
    return stopping;
  }

  return {
    start,
    stop,
    reload,
    configFingerprint: () => live.current().fingerprint,
    logger,
    get context() {
      if (!context) throw new Error("the app has not started");
      return context;
    },
  };
}
