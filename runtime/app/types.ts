// The app's shapes: what createApp takes (AppDeps), what it hands its services and the Admin API
// (AppContext), and what it returns (SpoolApp).
import type { SpoolConfig } from "../../compiler/ir.js";
import type { AdminRouteHandler } from "../admin/front.js";
import type { TrendSignalsView } from "../admin/health/details.js";
import type { Clock } from "../time/clock.js";
import type { HttpServerOptions } from "../http/server.js";
import type { LogLevel, RuntimeLogger } from "../observability/log.js";
import type { SpoolMetrics } from "../observability/metrics.js";
import type { QueueStatsSource } from "../observability/queue-stats.js";
import type { ReloadOutcome } from "../reload/apply.js";
import type { RuntimeSecrets } from "../secrets/pools.js";
import type { StoreDeps, StoreSpec } from "../store/open.js";
import type { StoreLocation } from "../store/spec.js";
import type { Store } from "../store/store.js";
import type { Tracing } from "../tracing/tracing.js";

export type { ReloadOutcome } from "../reload/apply.js";

/** What services and the Admin API get from the running app. */
export interface AppContext {
  readonly store: Store;
  readonly metrics: SpoolMetrics;
  readonly logger: RuntimeLogger;
  readonly clock: Clock;
  readonly queueStats: QueueStatsSource;
  /** The runtime secret pools (docs/secrets.md): ingress verifies with them, the Admin API changes them. */
  readonly secrets: RuntimeSecrets;
  /** Spans for the listeners and the push client; TRACING_OFF when tracing is off or could not start. */
  readonly tracing: Tracing;
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
  /**
   * The 32 bytes of SPOOL_SECRET_ENCRYPTION_KEY (runtime/secrets/key.ts), which seal runtime secret
   * versions; without it the pools answer 503 secret_management_unavailable.
   */
  secretKey?: Buffer | null;
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
  /** HTTP timeouts; defaults: DEFAULT_HTTP_TIMEOUTS (runtime/http/server.ts). */
  http?: Partial<HttpServerOptions>;
}

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
