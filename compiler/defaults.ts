// Every default of the Spoolfile, once, with where it comes from. The compiler fills the IR from
// these; nothing else in Spool knows a default.
import type {
  AdaptiveBackpressure,
  ListenAddress,
  RateLimit,
  DeliverDefaults,
  EgressPolicy,
  PublishPolicy,
  RetentionConfig,
  TracingConfig,
  TrendSignals,
} from "./ir.js";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const KB = 1024;
const MB = 1024 * KB;

export const DEFAULTS = {
  // docs/spoolfile.md "Top-level blocks"
  ingressListen: ":8080",
  pullListen: ":9443",
  adminListen: "127.0.0.1:2019",
  metricsListen: "127.0.0.1:9900",
  metricsPrefix: "/metrics",
  // docs/spoolfile.md "`pull_api`"
  pullMaxBatch: 100,
  pullMaxLeaseBatch: 100,
  pullDefaultLeaseTtlMs: 30 * SECOND,
  pullMaxLeaseTtlMs: null as number | null,
  pullDefaultMaxWaitMs: 0,
  pullMaxWaitMs: null as number | null,
  // docs/spoolfile.md "`pull_api`", SSE streams (docs/decisions.md D110)
  pullSseKeepaliveMs: 15 * SECOND,
  pullSseMaxConnectionMs: null as number | null,
  /** `pull_api { grpc_listen }`: the gRPC worker service is off unless a listen address is written (docs/grpc.md). */
  pullGrpcListen: null as ListenAddress | null,
  // No rate limit unless configured (docs/spoolfile.md; the Pull API's limit is Spool's own,
  // docs/decisions.md D20).
  ingressRateLimit: null as RateLimit | null,
  pullRateLimit: null as RateLimit | null,
  // docs/spoolfile.md "Queue limits and retention"
  maxDepth: 10_000,
  // docs/spoolfile.md "`defaults`"
  maxBodyBytes: 2 * MB,
  maxHeadersBytes: 64 * KB,
  // docs/decisions.md D34; docs/delivery.md
  deliver: {
    retry: { maxRetries: 8, baseMs: 2 * SECOND, capMs: 2 * MINUTE, jitter: 0.2 },
    timeoutMs: 10 * SECOND,
    concurrency: 20,
    // docs/delivery.md: a lease lasts max(30 s, the longest one delivery can take + 5 s).
    minLeaseTtlMs: 30 * SECOND,
    leaseSlackMs: 5 * SECOND,
  } satisfies DeliverDefaults,
  egress: { allow: [], deny: [], httpsOnly: true, redirects: false, dnsRebindProtection: true } satisfies EgressPolicy,
  publishPolicy: {
    direct: true,
    managed: true,
    allowPullRoutes: true,
    allowDeliverRoutes: true,
    requireActor: false,
    requireRequestId: false,
    failClosed: false,
    actorAllow: [],
    actorPrefix: [],
  } satisfies PublishPolicy,
  adaptiveBackpressure: {
    enabled: false,
    minTotal: 200,
    queuedPercent: 80,
    readyLagMs: 30 * SECOND,
    oldestQueuedAgeMs: 60 * SECOND,
    sustainedGrowth: true,
  } satisfies AdaptiveBackpressure,
  trendSignals: {
    windowMs: 15 * MINUTE,
    expectedCaptureIntervalMs: MINUTE,
    staleGraceFactor: 3,
    sustainedGrowthConsecutive: 3,
    sustainedGrowthMinSamples: 5,
    sustainedGrowthMinDelta: 10,
    recentSurgeMinTotal: 20,
    recentSurgeMinDelta: 10,
    recentSurgePercent: 50,
    deadShareHighMinTotal: 10,
    deadShareHighPercent: 20,
    queuedPressureMinTotal: 20,
    queuedPressurePercent: 75,
    queuedPressureLeasedMultiplier: 2,
  } satisfies TrendSignals,
  // docs/spoolfile.md "Queue limits and retention"
  retention: {
    queue: { maxAgeMs: 7 * DAY, pruneIntervalMs: 5 * MINUTE },
    delivered: { maxAgeMs: null },
    dlq: { maxAgeMs: 30 * DAY, maxDepth: 10_000 },
    attempts: { maxAgeMs: 7 * DAY, maxRows: 200_000 },
  } satisfies RetentionConfig,
  // docs/spoolfile.md "`observability`" (tracing; Spool's documented defaults, not the reference code's)
  tracing: {
    enabled: false,
    collector: null,
    // Not written: the collector URL's path, or /v1/traces when it has none (docs/spoolfile.md).
    urlPath: null,
    timeoutMs: 10 * SECOND,
    compression: "none",
    insecure: false,
    proxyUrl: null,
    tls: { caFile: null, certFile: null, keyFile: null, serverName: null, insecureSkipVerify: false },
    retry: { enabled: false, initialIntervalMs: 5 * SECOND, maxIntervalMs: 30 * SECOND, maxElapsedTimeMs: MINUTE },
    headers: [],
  } satisfies TracingConfig,
  // docs/spoolfile.md "Ingress auth"; docs/decisions.md D14
  hmacToleranceMs: 5 * MINUTE,
  hmacSignatureHeader: "X-Signature",
  hmacTimestampHeader: "X-Timestamp",
  hmacNonceHeader: "X-Nonce",
  forwardAuthTimeoutMs: 2 * SECOND,
  forwardAuthBodyLimitBytes: 64 * KB,
  signatureHeader: "X-Spool-Signature",
  timestampHeader: "X-Spool-Timestamp",
  secretMaxVersions: 32,
  /** docs/spoolfile.md "Syntax": the largest size accepted. */
  maxSizeBytes: 1024 * 1024 * MB,
  deliverConcurrencyMax: 10_000,
} as const;
