// Hand-built IR for Admin tests that need a config shape the compiler is not asked to produce
// (the end-to-end tests compile real Spoolfile text instead).
import { DEFAULTS } from "../../compiler/defaults.js";
import type { PublishPolicy, Route, SpoolConfig, TrendSignals } from "../../compiler/ir.js";

const listen = (port: number) => ({ host: "127.0.0.1", port, address: `127.0.0.1:${port}` });

// Defaults come from the compiler's one table, never copied here.
export const DEFAULT_TREND_SIGNALS: TrendSignals = structuredClone(DEFAULTS.trendSignals);
export const DEFAULT_PUBLISH_POLICY: PublishPolicy = structuredClone(DEFAULTS.publishPolicy);

export function pullRoute(path: string, overrides: Partial<Route> = {}): Route {
  return {
    path,
    channel: "inbound",
    application: null,
    endpointName: null,
    match: null,
    rateLimit: null,
    auth: { kind: "none" },
    maxBodyBytes: 2 * 1024 * 1024,
    maxHeadersBytes: 64 * 1024,
    publish: { enabled: true, direct: true, managed: true },
    backend: "sqlite",
    mode: { kind: "pull", path, tokens: null },
    ...overrides,
  };
}

export function deliverRoute(path: string, urls: readonly string[], overrides: Partial<Route> = {}): Route {
  const retry = { maxRetries: 8, baseMs: 2000, capMs: 120_000, jitter: 0.2 };
  return pullRoute(path, {
    mode: {
      kind: "deliver",
      concurrency: 20,
      targets: urls.map((url) => ({ kind: "http" as const, target: url, url, timeoutMs: 10_000, retry, headers: [], sign: null })),
    },
    ...overrides,
  });
}

export function buildConfig(routes: readonly Route[], policy: Partial<PublishPolicy> = {}): SpoolConfig {
  return {
    ingress: { listen: listen(8080), tls: null, rateLimit: null },
    pullApi: {
      listen: listen(9443),
      prefix: "",
      tokens: [],
      maxBatch: 100,
      maxLeaseBatch: 100,
      defaultLeaseTtlMs: 30_000,
      maxLeaseTtlMs: null,
      defaultMaxWaitMs: 0,
      maxWaitMs: null,
      tls: null,
    },
    adminApi: { listen: listen(2019), prefix: "", tokens: [], tls: null },
    observability: {
      accessLog: { enabled: false, output: { kind: "stderr" }, format: "json" },
      runtimeLog: { level: "info", output: { kind: "stderr" }, format: "json" },
      metrics: { enabled: false, listen: listen(9900), prefix: "/metrics" },
      tracing: {
        enabled: false,
        collector: null,
        urlPath: "/v1/traces",
        timeoutMs: 10_000,
        compression: "none",
        insecure: false,
        proxyUrl: null,
        tls: { caFile: null, certFile: null, keyFile: null, serverName: null, insecureSkipVerify: false },
        retry: { enabled: false, initialIntervalMs: null, maxIntervalMs: null, maxElapsedTimeMs: null },
        headers: [],
      },
    },
    queueLimits: { maxDepth: 10_000, dropPolicy: "reject" },
    retention: {
      queue: { maxAgeMs: null, pruneIntervalMs: 300_000 },
      delivered: { maxAgeMs: null },
      dlq: { maxAgeMs: null, maxDepth: null },
      attempts: { maxAgeMs: null, maxRows: null },
    },
    defaults: {
      maxBodyBytes: 2 * 1024 * 1024,
      maxHeadersBytes: 64 * 1024,
      deliver: { retry: { maxRetries: 8, baseMs: 2000, capMs: 120_000, jitter: 0.2 }, timeoutMs: 10_000, concurrency: 20 },
      egress: { allow: [], deny: [], httpsOnly: true, redirects: false, dnsRebindProtection: true },
      publishPolicy: { ...DEFAULT_PUBLISH_POLICY, ...policy },
      adaptiveBackpressure: { enabled: false, minTotal: 200, queuedPercent: 80, readyLagMs: 30_000, oldestQueuedAgeMs: 60_000, sustainedGrowth: true },
      trendSignals: DEFAULT_TREND_SIGNALS,
    },
    vars: {},
    secrets: [],
    matchers: {},
    routes,
    backend: "sqlite",
  };
}
