// The typed IR of a Spoolfile: readonly plain data, fully defaulted and cross-checked. The runtime
// reads only this: durations are milliseconds, sizes are bytes, secrets are decoded sources with
// their resolved values, and there is no text left to parse. `null` means "off" or "not set".

export type Backend = "sqlite" | "memory" | "postgres";
export type ChannelKind = "inbound" | "outbound" | "internal";

/** `env:NAME`, `file:PATH`, `raw:VALUE` (and the `secret_ref "ID"` indirection, resolved into these). */
export interface SecretSource {
  readonly kind: "env" | "file" | "raw";
  /** The variable name, file path or raw value as written (after placeholders). */
  readonly ref: string;
  /** The resolved secret, or null when it could not be read (a warning at validate, an error at run). */
  readonly value: string | null;
  /** For `file:`, the file's absolute path (relative refs are resolved against the config's directory). */
  readonly path?: string;
}

/** A secret with an optional validity window, for rotation (valid_from inclusive, valid_until exclusive). */
export interface RotatingSecret {
  readonly id: string | null;
  readonly source: SecretSource;
  readonly validFromMs: number | null;
  readonly validUntilMs: number | null;
}

export interface ListenAddress {
  /** Host as written ("" for all interfaces, as in `:8080`). */
  readonly host: string;
  readonly port: number;
  /** The address as written, normalised (`host:port`, `[v6]:port`). Listeners are shared when equal. */
  readonly address: string;
}

export interface TlsConfig {
  readonly certFile: string;
  readonly keyFile: string;
  readonly clientCaFile: string | null;
  readonly clientAuth: "none" | "request" | "require_any" | "verify_if_given" | "require_and_verify";
}

export interface RateLimit {
  readonly rps: number;
  readonly burst: number;
}

export interface IngressConfig {
  readonly listen: ListenAddress;
  readonly tls: TlsConfig | null;
  readonly rateLimit: RateLimit | null;
}

export interface PullApiConfig {
  readonly listen: ListenAddress;
  /** "" or a path starting with "/" and not ending with "/". */
  readonly prefix: string;
  readonly tokens: readonly SecretSource[];
  readonly maxBatch: number;
  readonly maxLeaseBatch: number;
  readonly defaultLeaseTtlMs: number;
  readonly maxLeaseTtlMs: number | null;
  readonly defaultMaxWaitMs: number;
  readonly maxWaitMs: number | null;
  /** An SSE stream writes a `: keepalive` comment after this long without a write. */
  readonly sseKeepaliveMs: number;
  /** An SSE stream's response ends cleanly after this long; null: streams run until closed. */
  readonly sseMaxConnectionMs: number | null;
  /** One token bucket per bearer token; null means no limit. */
  readonly rateLimit: RateLimit | null;
  readonly tls: TlsConfig | null;
  /** `grpc_listen`: where the gRPC worker service listens (docs/grpc.md); null means off. */
  readonly grpcListen: ListenAddress | null;
}

export interface AdminApiConfig {
  readonly listen: ListenAddress;
  readonly prefix: string;
  readonly tokens: readonly SecretSource[];
  readonly tls: TlsConfig | null;
}

export type LogOutput = { readonly kind: "stdout" } | { readonly kind: "stderr" } | { readonly kind: "file"; readonly path: string };
export type LogLevel = "debug" | "info" | "warn" | "error" | "off";

export interface AccessLogConfig {
  readonly enabled: boolean;
  readonly output: LogOutput;
  readonly format: "json";
}

export interface RuntimeLogConfig {
  readonly level: LogLevel;
  readonly output: LogOutput;
  readonly format: "json";
}

export interface MetricsConfig {
  readonly enabled: boolean;
  readonly listen: ListenAddress;
  readonly prefix: string;
}

export interface TracingConfig {
  readonly enabled: boolean;
  readonly collector: string | null;
  /** `url_path` as written; null: the collector URL's own path, else /v1/traces (runtime/tracing/settings.ts). */
  readonly urlPath: string | null;
  readonly timeoutMs: number;
  readonly compression: "none" | "gzip";
  readonly insecure: boolean;
  readonly proxyUrl: string | null;
  readonly tls: {
    readonly caFile: string | null;
    readonly certFile: string | null;
    readonly keyFile: string | null;
    readonly serverName: string | null;
    readonly insecureSkipVerify: boolean;
  };
  readonly retry: {
    readonly enabled: boolean;
    readonly initialIntervalMs: number;
    readonly maxIntervalMs: number;
    readonly maxElapsedTimeMs: number;
  };
  readonly headers: readonly (readonly [name: string, value: string])[];
}

export interface ObservabilityConfig {
  readonly accessLog: AccessLogConfig;
  readonly runtimeLog: RuntimeLogConfig;
  readonly metrics: MetricsConfig;
  readonly tracing: TracingConfig;
}

export interface QueueLimits {
  readonly maxDepth: number;
  readonly dropPolicy: "reject" | "drop_oldest";
}

export interface RetentionConfig {
  readonly queue: { readonly maxAgeMs: number | null; readonly pruneIntervalMs: number };
  readonly delivered: { readonly maxAgeMs: number | null };
  readonly dlq: { readonly maxAgeMs: number | null; readonly maxDepth: number | null };
  readonly attempts: { readonly maxAgeMs: number | null; readonly maxRows: number | null };
}

export interface RetryPolicy {
  readonly maxRetries: number;
  readonly baseMs: number;
  readonly capMs: number;
  readonly jitter: number;
}

export interface DeliverDefaults {
  readonly retry: RetryPolicy;
  readonly timeoutMs: number;
  readonly concurrency: number;
  /**
   * A delivery's lease lasts max(minLeaseTtlMs, the longest one delivery can take + leaseSlackMs)
   * (docs/delivery.md). Not set in a Spoolfile: resolved here so the runtime keeps no default.
   */
  readonly minLeaseTtlMs: number;
  readonly leaseSlackMs: number;
}

export interface EgressPolicy {
  /** Host names, `*.domain` wildcards, IPs and CIDRs, validated. */
  readonly allow: readonly string[];
  readonly deny: readonly string[];
  readonly httpsOnly: boolean;
  readonly redirects: boolean;
  readonly dnsRebindProtection: boolean;
}

export interface PublishPolicy {
  readonly direct: boolean;
  readonly managed: boolean;
  readonly allowPullRoutes: boolean;
  readonly allowDeliverRoutes: boolean;
  readonly requireActor: boolean;
  readonly requireRequestId: boolean;
  readonly failClosed: boolean;
  readonly actorAllow: readonly string[];
  readonly actorPrefix: readonly string[];
}

export interface AdaptiveBackpressure {
  readonly enabled: boolean;
  readonly minTotal: number;
  readonly queuedPercent: number;
  readonly readyLagMs: number;
  readonly oldestQueuedAgeMs: number;
  readonly sustainedGrowth: boolean;
}

export interface TrendSignals {
  readonly windowMs: number;
  readonly expectedCaptureIntervalMs: number;
  readonly staleGraceFactor: number;
  readonly sustainedGrowthConsecutive: number;
  readonly sustainedGrowthMinSamples: number;
  readonly sustainedGrowthMinDelta: number;
  readonly recentSurgeMinTotal: number;
  readonly recentSurgeMinDelta: number;
  readonly recentSurgePercent: number;
  readonly deadShareHighMinTotal: number;
  readonly deadShareHighPercent: number;
  readonly queuedPressureMinTotal: number;
  readonly queuedPressurePercent: number;
  readonly queuedPressureLeasedMultiplier: number;
}

export interface Defaults {
  readonly maxBodyBytes: number;
  readonly maxHeadersBytes: number;
  readonly deliver: DeliverDefaults;
  readonly egress: EgressPolicy;
  readonly publishPolicy: PublishPolicy;
  readonly adaptiveBackpressure: AdaptiveBackpressure;
  readonly trendSignals: TrendSignals;
}

/** A named secret of the `secrets` block, referenced by `secret_ref "ID"`. */
export interface NamedSecret {
  readonly id: string;
  /** The value; null only for a runtime pool written without one (its versions come from the Admin API). */
  readonly source: SecretSource | null;
  readonly validFromMs: number | null;
  readonly validUntilMs: number | null;
  /** `runtime on`: a pool of versions managed through the Admin API (docs/secrets.md); `source` seeds it. */
  readonly runtime: boolean;
  readonly maxVersions: number;
}

/** Request criteria, ANDed. Empty arrays mean "no criterion of that kind". */
export interface MatchCriteria {
  /** Upper-case methods; empty means POST only (docs/decisions.md D12). */
  readonly methods: readonly string[];
  /** Exact host, `*`, or `*.domain`, lower-cased. */
  readonly hosts: readonly string[];
  readonly headers: readonly { readonly name: string; readonly value: string }[];
  readonly headersExist: readonly string[];
  readonly query: readonly { readonly name: string; readonly value: string }[];
  readonly queryExist: readonly string[];
  /** IPs and CIDRs as written (validated). */
  readonly remoteIps: readonly string[];
}

export type HmacProvider = "github" | "gitea" | "stripe" | "cituro" | "standard_webhooks";

export type RouteAuth =
  | { readonly kind: "none" }
  | { readonly kind: "token"; readonly tokens: readonly SecretSource[] }
  | { readonly kind: "basic"; readonly users: readonly { readonly username: string; readonly password: string }[] }
  | {
      readonly kind: "hmac";
      readonly secrets: readonly RotatingSecret[];
      /** IDs of the `runtime on` pools named by secret_ref: their versions are looked up per request. */
      readonly runtimePools: readonly string[];
      readonly signatureHeader: string;
      readonly timestampHeader: string;
      readonly nonceHeader: string;
      readonly toleranceMs: number;
    }
  | {
      readonly kind: "provider";
      readonly provider: HmacProvider;
      readonly secrets: readonly RotatingSecret[];
      readonly runtimePools: readonly string[];
      readonly toleranceMs: number;
    }
  | {
      readonly kind: "forward";
      readonly url: string;
      readonly timeoutMs: number;
      readonly copyHeaders: readonly string[];
      readonly bodyLimitBytes: number;
    };

export interface SignConfig {
  readonly mode: "hmac" | "standard_webhooks";
  readonly secrets: readonly RotatingSecret[];
  readonly selection: "newest_valid" | "oldest_valid";
  readonly signatureHeader: string;
  readonly timestampHeader: string;
}

export interface HttpTarget {
  readonly kind: "http";
  /** The target's identity in the store and the API (`target` field): the URL. */
  readonly target: string;
  readonly url: string;
  /**
   * The URL as written in the Spoolfile when placeholders made it (`{vars.HOST}/in`), absent when
   * written literally: the delivery log shows this, never the expanded value (docs/delivery.md).
   */
  readonly written?: string;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly headers: readonly (readonly [name: string, value: string])[];
  readonly sign: SignConfig | null;
}

export interface ExecTarget {
  readonly kind: "exec";
  /** `exec:<program>`: the target's identity in the store and the API. */
  readonly target: string;
  readonly program: string;
  readonly args: readonly string[];
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly env: readonly (readonly [name: string, value: string])[];
}

export type DeliverTarget = HttpTarget | ExecTarget;

export type RouteMode =
  | {
      readonly kind: "pull";
      /** Relative to `pull_api.prefix`. */
      readonly path: string;
      /** Per-route tokens, which replace the global allowlist; null means the global list applies. */
      readonly tokens: readonly SecretSource[] | null;
    }
  | { readonly kind: "deliver"; readonly targets: readonly DeliverTarget[]; readonly concurrency: number };

export interface RoutePublish {
  readonly enabled: boolean;
  readonly direct: boolean;
  readonly managed: boolean;
}

export interface Route {
  /** Cleaned absolute path: the route's identity. */
  readonly path: string;
  readonly channel: ChannelKind;
  readonly application: string | null;
  readonly endpointName: string | null;
  /** Named matchers and the inline `match { }` merged; null when the route has no criteria. */
  readonly match: MatchCriteria | null;
  readonly rateLimit: RateLimit | null;
  readonly auth: RouteAuth;
  readonly maxBodyBytes: number;
  readonly maxHeadersBytes: number;
  readonly publish: RoutePublish;
  readonly backend: Backend;
  readonly mode: RouteMode;
}

export interface SpoolConfig {
  readonly ingress: IngressConfig;
  readonly pullApi: PullApiConfig;
  readonly adminApi: AdminApiConfig;
  readonly observability: ObservabilityConfig;
  readonly queueLimits: QueueLimits;
  readonly retention: RetentionConfig;
  readonly defaults: Defaults;
  /** Resolved `vars` values. */
  readonly vars: Readonly<Record<string, string>>;
  readonly secrets: readonly NamedSecret[];
  readonly matchers: Readonly<Record<string, MatchCriteria>>;
  readonly routes: readonly Route[];
  /** The one backend of this instance (docs/decisions.md D6). */
  readonly backend: Backend;
}

/** The store target names of a route, in the order ingress fans out to them. */
export function routeTargets(route: Route): string[] {
  return route.mode.kind === "pull" ? ["pull"] : route.mode.targets.map((t) => t.target);
}
