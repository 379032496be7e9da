import { DEFAULTS } from "../../../compiler/defaults.js";
// Hand-built IR for in-process app tests: the compiler's defaults (reference-behaviour.md §1.3)
// with listeners on 127.0.0.1 port 0, so each test gets fresh ports.
import type { ListenAddress, Route, RouteAuth, RouteMode, SecretSource, SpoolConfig } from "../../../compiler/ir.js";

export const raw = (value: string): SecretSource => ({ kind: "raw", ref: value, value });

export function listenAt(host: string, port: number): ListenAddress {
  return { host, port, address: `${host}:${port}` };
}

export function pullRoute(path: string, pullPath: string, extra: Partial<Route> = {}, tokens: readonly SecretSource[] | null = null): Route {
  return route(path, { kind: "pull", path: pullPath, tokens }, extra);
}

export function route(path: string, mode: RouteMode, extra: Partial<Route> = {}): Route {
  return {
    path,
    channel: "inbound",
    application: null,
    endpointName: null,
    match: null,
    rateLimit: null,
    auth: { kind: "none" } as RouteAuth,
    maxBodyBytes: 2 * 1024 * 1024,
    maxHeadersBytes: 64 * 1024,
    publish: { enabled: true, direct: true, managed: true },
    backend: "sqlite",
    mode,
    ...extra,
  };
}

export interface ConfigOptions {
  routes: Route[];
  backend?: SpoolConfig["backend"];
  pullTokens?: string[];
  adminTokens?: string[];
  /** One address for ingress, pull (prefix /pull) and admin (prefix /admin). */
  shared?: boolean;
  maxDepth?: number;
  ingressRateLimit?: { rps: number; burst: number } | null;
  patch?: (config: Mutable<SpoolConfig>) => void;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export function buildConfig(options: ConfigOptions): SpoolConfig {
  const backend = options.backend ?? "sqlite";
  const shared = options.shared ?? false;
  const config: Mutable<SpoolConfig> = {
    ingress: { listen: listenAt("127.0.0.1", 0), tls: null, rateLimit: options.ingressRateLimit ?? null },
    pullApi: {
      listen: shared ? listenAt("127.0.0.1", 0) : { host: "127.0.0.1", port: 0, address: "127.0.0.1:0#pull" },
      prefix: shared ? "/pull" : "",
      tokens: (options.pullTokens ?? ["pull-token"]).map(raw),
      maxBatch: 100,
      maxLeaseBatch: 100,
      defaultLeaseTtlMs: 30_000,
      maxLeaseTtlMs: 300_000,
      defaultMaxWaitMs: 0,
      maxWaitMs: 30_000,
      tls: null,
    },
    adminApi: {
      listen: shared ? listenAt("127.0.0.1", 0) : { host: "127.0.0.1", port: 0, address: "127.0.0.1:0#admin" },
      prefix: shared ? "/admin" : "",
      tokens: (options.adminTokens ?? []).map(raw),
      tls: null,
    },
    observability: {
      accessLog: { enabled: false, output: { kind: "stderr" }, format: "json" },
      runtimeLog: { level: "error", output: { kind: "stderr" }, format: "json" },
      metrics: { enabled: false, listen: listenAt("127.0.0.1", 0), prefix: "/metrics" },
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
    queueLimits: { maxDepth: options.maxDepth ?? 10_000, dropPolicy: "reject" },
    // Defaults come from the compiler's one table, never copied here.
    retention: structuredClone(DEFAULTS.retention),
    defaults: structuredClone({
      maxBodyBytes: DEFAULTS.maxBodyBytes,
      maxHeadersBytes: DEFAULTS.maxHeadersBytes,
      deliver: DEFAULTS.deliver,
      egress: DEFAULTS.egress,
      publishPolicy: DEFAULTS.publishPolicy,
      adaptiveBackpressure: DEFAULTS.adaptiveBackpressure,
      trendSignals: DEFAULTS.trendSignals,
    }),
    vars: {},
    secrets: [],
    matchers: {},
    routes: options.routes.map((r) => ({ ...r, backend })),
    backend,
  };
  options.patch?.(config);
  return config;
}
