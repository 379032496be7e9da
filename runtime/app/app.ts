// createApp: a compiled config in, a running Spool out. Wiring only: the parts (store, listeners,
// ingress, Pull API, health, metrics, logs) live in their own files; this file builds them from the
// IR, swaps their per-config state atomically on reload, and stops them in order.
import type { SpoolConfig } from "../compiler/ir.js";
import { createAdminFront, type AdminRouteHandler } from "./admin-front.js";
import { secretValues } from "./auth/secrets.js";
import { systemClock, type Clock } from "./clock.js";
import { createHealthEndpoint } from "./health/http.js";
import type { TrendSignalsView } from "./health/details.js";
import { createQueueStatsSource, type QueueStatsSource } from "./health/queue-stats.js";
import { createHttpServer, type HttpListener, type HttpServerOptions } from "./http/server.js";
import { backpressureReason } from "./ingress/backpressure.js";
import { createIngressHandler } from "./ingress/handler.js";
import { buildIngressState, ingressRateLimits, type IngressState } from "./ingress/state.js";
import { NonceCache } from "./ingress/verify/index.js";
import { listenerName, loadPlanTls, planListeners, startListeners, type RunningListener } from "./listeners.js";
import { createAccessLogger, type AccessLogger } from "./observability/access-log.js";
import { createRuntimeLogger, type LogLevel, type RuntimeLogger } from "./observability/log.js";
import { metricsHandler } from "./observability/metrics-endpoint.js";
import { createMetrics, recordIngressRejection, type QueueSnapshot, type SpoolMetrics } from "./observability/metrics.js";
import type { CounterSeries, HistogramSeries } from "./observability/series.js";
import { createPullHandler } from "./pull/http.js";
import { createPullOps } from "./pull/ops.js";
import { activeLeasesByPullRoute, buildPullState, pullRateLimits, type PullState } from "./pull/state.js";
import { RateLimitRegistry } from "./ratelimit/registry.js";
import { restartRequiredChanges } from "./reload-policy.js";
import { storeSpecFor, type StoreLocation } from "./store-spec.js";
import { openStore, type StoreDeps, type StoreSpec } from "./store/open.js";
import type { StoreObserver } from "./store/observer.js";
import type { MemoryStoreStats } from "./store/reports.js";
import type { Store } from "./store/store.js";

/** What services and the Admin API get from the running app. */
export interface AppContext {
  readonly store: Store;
  readonly metrics: SpoolMetrics;
  readonly logger: RuntimeLogger;
  readonly clock: Clock;
  readonly queueStats: QueueStatsSource;
  /** Aborted when stop() begins. */
  readonly shutdownSignal: AbortSignal;
  /** The config now serving. */
  config(): SpoolConfig;
  /** Applies a new config (management PUT/DELETE: write the file, then reload); `fingerprint` as in AppDeps. */
  reload(next: SpoolConfig, fingerprint: string | null): ReloadOutcome;
}

/**
 * Something started and stopped with the app and told about reloads: the push/exec delivery
 * dispatcher is one (`createDispatcher(...)` adapted to this shape).
 */
export interface AppService {
  readonly name: string;
  start(): void | Promise<void>;
  /** Called after a reload was applied, with the new config. */
  reconfigure(config: SpoolConfig): void;
  /** Finish or abandon work within `drainMs`; the store closes after every service stopped. */
  stop(drainMs: number): Promise<void>;
}

export interface AppDeps {
  /** `spool version`, for spool_build_info. */
  version: string;
  /**
   * The sha256 (hex) of the config file the initial config was compiled from (configFingerprint in
   * compiler/index.ts), shown in health details so deploy tooling can confirm which file serves.
   */
  configFingerprint?: string | null;
  clock?: Clock;
  /** Where the store lives (--db, --postgres-dsn). */
  storeLocation: StoreLocation;
  /** Opens the store; defaults to runtime/store/open.ts (tests inject failures here). */
  openStore?: (spec: StoreSpec, deps: StoreDeps) => Promise<Store>;
  /** `--log-level`: overrides the config's runtime_log level. */
  logLevel?: LogLevel;
  /** Replaces the runtime logger the config describes (tests). */
  logger?: RuntimeLogger;
  /** The Admin API's routes behind the admin token check (everything but /healthz). */
  admin?: (context: AppContext) => AdminRouteHandler;
  /** Started after the listeners are up, reconfigured on reload, stopped before the store closes. */
  services?: readonly ((context: AppContext) => AppService)[];
  /** Trend signals for /healthz?details=1 (the Admin API's backlog analysis). */
  trendSignals?: (context: AppContext) => () => Promise<TrendSignalsView>;
  /** HTTP timeouts; defaults below. */
  http?: Partial<HttpServerOptions>;
}

export type ReloadOutcome =
  | { applied: true; generation: number }
  | { applied: false; reason: "restart_required"; changes: string[] };

export interface BoundAddress {
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

export interface SpoolApp {
  /** Opens the store and binds every listener; resolves once the service answers. */
  start(): Promise<{ addresses: BoundAddress[] }>;
  /** Stop accepting, end long polls, let in-flight requests finish (up to `deadlineMs`), stop services, close the store. */
  stop(deadlineMs?: number): Promise<void>;
  reload(next: SpoolConfig, fingerprint: string | null): ReloadOutcome;
  /** The fingerprint of the config file serving now (AppDeps.configFingerprint, then each reload's). */
  configFingerprint(): string | null;
  /** The runtime log (from the config's runtime_log, or deps.logger). */
  readonly logger: RuntimeLogger;
  /** Available after start(). */
  readonly context: AppContext;
}

const DEFAULT_HTTP: Omit<HttpServerOptions, "maxHeaderSize"> = {
  // A client has 10 s to send its headers (slowloris), a minute for the whole request; idle
  // keep-alive connections go after 5 s.
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
};
/** The default of stop(): running deliveries and requests in flight get this long (docs/decisions.md D54: 10 s, exit within 15 s). */
export const DEFAULT_STOP_DEADLINE_MS = 10_000;

/** Per-config state, replaced as a whole by reload. */
interface Generation {
  readonly config: SpoolConfig;
  readonly number: number;
  readonly loadedAtMs: number;
  /** sha256 of the file it was compiled from; null when not known (a config built in code). */
  readonly fingerprint: string | null;
  readonly ingress: IngressState;
  readonly pull: PullState;
  readonly adminTokens: readonly string[];
}

export function createApp(initialConfig: SpoolConfig, deps: AppDeps): SpoolApp {
  const clock = deps.clock ?? systemClock;
  const shutdown = new AbortController();
  const ingressRateLimitBuckets = new RateLimitRegistry(clock);
  const pullRateLimitBuckets = new RateLimitRegistry(clock);
  // These outlive reloads: a reload must neither reset a rate limit nor reopen a replay window.
  const nonces = new NonceCache({ clock });
  let generation = buildGeneration(initialConfig, 1, clock.now(), deps.configFingerprint ?? null);
  ingressRateLimitBuckets.apply(ingressRateLimits(initialConfig));
  pullRateLimitBuckets.apply(pullRateLimits(generation.pull));

  const logger =
    deps.logger ??
    createRuntimeLogger({ level: deps.logLevel ?? initialConfig.observability.runtimeLog.level, output: initialConfig.observability.runtimeLog.output, clock });
  let context: AppContext | undefined;
  let listeners: RunningListener[] = [];
  let metricsListener: HttpListener | undefined;
  let services: AppService[] = [];
  let accessLog: AccessLogger | undefined;
  let store: Store | undefined;
  let stopping: Promise<void> | undefined;

  function reload(next: SpoolConfig, fingerprint: string | null): ReloadOutcome {
    const changes = restartRequiredChanges(generation.config, next);
    if (changes.length > 0) {
      logger.warn("config_reloaded_restart_required", { changes, detail: "these settings take effect after a restart; the running config is unchanged" });
      return { applied: false, reason: "restart_required", changes };
    }
    const candidate = buildGeneration(next, generation.number + 1, clock.now(), fingerprint);
    ingressRateLimitBuckets.apply(ingressRateLimits(next));
    pullRateLimitBuckets.apply(pullRateLimits(candidate.pull));
    generation = candidate;
    // Node reads a server's maxHeaderSize when a connection opens: new connections get the limit
    // the new routes need (a raised max_headers must not stay capped by the old parser limit).
    for (const { listener } of listeners) listener.setMaxHeaderSize(parserHeaderLimit(next));
    // The tls blocks are unchanged (a change needs a restart), but their files are read again, as
    // secrets from file: sources are: a renewed certificate is served from this reload on.
    for (const { plan, listener } of listeners) {
      if (!plan.tls) continue;
      try {
        listener.refreshTls(loadPlanTls(plan.tls, plan));
      } catch (error) {
        logger.warn("tls_reload_failed", { listener: listenerName(plan), error, detail: "the certificate read at the last start or reload is still served" });
      }
    }
    for (const service of services) {
      try {
        service.reconfigure(next);
      } catch (error) {
        logger.error("service_reconfigure_failed", { service: service.name, error });
      }
    }
    logger.info("config_reloaded", { generation: candidate.number, routes: next.routes.length });
    return { applied: true, generation: candidate.number };
  }

  async function start(): Promise<{ addresses: BoundAddress[] }> {
    const config = generation.config;
    const plans = planListeners(config);
    const metrics = createMetrics({
      backend: config.backend,
      version: deps.version,
      clock,
      queueSnapshot: () => queueSnapshot(),
      // The queue stats source below is the one cache (≤2 s stale, docs/decisions.md D32);
      // a second 2 s cache in the metrics would let gauges lag by up to 4 s. Scrape-level reuse stays.
      snapshotMaxAgeMs: 0,
      onSnapshotError: (error) => logger.warn("queue_snapshot_failed", { error }),
    });
    const open = deps.openStore ?? openStore;
    const memoryFootprint = { stats: (): MemoryStoreStats | null => null };
    store = await open(storeSpecFor(config, deps.storeLocation), {
      clock,
      observer: storeObserver(metrics, memoryFootprint),
      onMaintenanceError: (task, error) => logger.warn("store_maintenance_failed", { task, error }),
      onClockSkew: (skewMs) =>
        logger.warn("clock_skew", {
          skew_ms: skewMs,
          detail: "this host's clock differs from the PostgreSQL server's; instances sharing the database need agreeing clocks (NTP) for leases and wake-ups",
        }),
    });
    const openedStore = store;
    const queueStats = createQueueStatsSource(openedStore, clock, {
      sampleIntervalMs: config.defaults.trendSignals.expectedCaptureIntervalMs,
      onError: (error) => logger.warn("queue_stats_failed", { error }),
    });
    async function queueSnapshot(): Promise<QueueSnapshot> {
      const { data } = await queueStats.get();
      const memory = memoryFootprint.stats();
      return {
        depth: { queued: data.byState.queued, leased: data.byState.leased, dead: data.byState.dead },
        oldestQueuedAgeSeconds: (data.oldestQueuedAgeMs ?? 0) / 1000,
        readyLagSeconds: (data.readyLagMs ?? 0) / 1000,
        leasesActiveByRoute: activeLeasesByPullRoute(generation.pull, data.leasedByRoute),
        memory: memory ? { itemsByState: memory.itemsByState, retainedBytesByState: memory.retainedBytesByState, retainedBytesTotal: memory.retainedBytesTotal } : undefined,
      };
    }

    context = {
      store: openedStore,
      metrics,
      logger,
      clock,
      queueStats,
      shutdownSignal: shutdown.signal,
      config: () => generation.config,
      reload,
    };
    const appContext = context;

    const ingress = createIngressHandler({
      state: () => generation.ingress,
      store: openedStore,
      clock,
      metrics,
      nonces,
      rateLimits: ingressRateLimitBuckets,
      logger: logger.child({ component: "ingress" }),
      backpressure: () => {
        const current = generation.config;
        if (!current.defaults.adaptiveBackpressure.enabled) return null;
        const stats = queueStats.peek();
        if (!stats) return null;
        const signals = current.defaults.trendSignals;
        return backpressureReason(
          current.defaults.adaptiveBackpressure,
          current.queueLimits.maxDepth,
          { total: stats.total, queued: stats.byState.queued, readyLagMs: stats.readyLagMs, oldestQueuedAgeMs: stats.oldestQueuedAgeMs },
          queueStats.totalHistory(),
          { consecutive: signals.sustainedGrowthConsecutive, minDelta: signals.sustainedGrowthMinDelta },
        );
      },
    });
    const pullLogger = logger.child({ component: "pull" });
    const pull = createPullHandler({
      state: () => generation.pull,
      rateLimits: pullRateLimitBuckets,
      metrics,
      shutdownSignal: shutdown.signal,
      ops: createPullOps({
        store: openedStore,
        clock,
        metrics,
        limits: () => generation.pull.limits,
        onStoreError: (operation, error) => pullLogger.error("pull_store_failed", { operation, error }),
      }),
    });
    const health = createHealthEndpoint({
      memoryStats: () => memoryFootprint.stats(),
      stats: queueStats,
      metrics,
      clock,
      config: () => ({ fingerprint: generation.fingerprint, generation: generation.number, loadedAtMs: generation.loadedAtMs }),
      trendSignals: deps.trendSignals?.(appContext),
    });
    const admin = createAdminFront({ tokens: () => generation.adminTokens, health, routes: deps.admin?.(appContext) });

    try {
      if (config.observability.accessLog.enabled) accessLog = createAccessLogger({ output: config.observability.accessLog.output, clock });
      const httpOptions: HttpServerOptions = {
        ...DEFAULT_HTTP,
        maxHeaderSize: parserHeaderLimit(config),
        onUnexpectedError: (error, req) => logger.error("request_failed", { method: req.method, path: req.url?.split("?")[0], error }),
        ...deps.http,
      };
      listeners = await startListeners(plans, {
        http: httpOptions,
        handlers: { ingress, pull, admin },
        accessLog,
        onIngressClientError: (status, code) => recordIngressRejection(metrics, code, status),
      });
      const metricsConfig = config.observability.metrics;
      if (metricsConfig.enabled) {
        const server = createHttpServer(metricsHandler(metrics.registry, { path: metricsConfig.prefix }), httpOptions);
        metricsListener = await server.listen({ host: metricsConfig.listen.host === "" ? undefined : metricsConfig.listen.host, port: metricsConfig.listen.port });
      }
      services = (deps.services ?? []).map((make) => make(appContext));
      for (const service of services) await service.start();
    } catch (error) {
      await stop(0);
      throw error;
    }

    const addresses: BoundAddress[] = listeners.map(({ plan, listener }) => ({
      name: listenerName(plan),
      host: listener.address.host,
      port: listener.address.port,
    }));
    if (metricsListener) addresses.push({ name: "metrics", host: metricsListener.address.host, port: metricsListener.address.port });
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
      if (store) {
        await store.close().catch((error: unknown) => logger.error("store_close_failed", { error }));
      }
      logger.info("spool_stopped", {});
      await accessLog?.close();
    })();
    return stopping;
  }

  return {
    start,
    stop,
    reload,
    configFingerprint: () => generation.fingerprint,
    logger,
    get context() {
      if (!context) throw new Error("the app has not started");
      return context;
    },
  };
}

function buildGeneration(config: SpoolConfig, number: number, loadedAtMs: number, fingerprint: string | null): Generation {
  return {
    config,
    number,
    loadedAtMs,
    fingerprint,
    ingress: buildIngressState(config),
    pull: buildPullState(config),
    adminTokens: secretValues(config.adminApi.tokens),
  };
}

// Node's parser limit on the whole header block (set per server, read per new connection, updated
// on reload); the routes' max_headers (Σ name+value bytes) is checked per request below it, with
// room for line framing.
function parserHeaderLimit(config: SpoolConfig): number {
  const largest = Math.max(config.defaults.maxHeadersBytes, ...config.routes.map((r) => r.maxHeadersBytes));
  return Math.max(16 * 1024, largest * 2 + 8 * 1024);
}

/** The store's calls and events as metrics; the memory backend's footprint reader lands in `memoryFootprint`. */
function storeObserver(metrics: SpoolMetrics, memoryFootprint: { stats: () => MemoryStoreStats | null }): StoreObserver {
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
