// IR for in-process app tests: the all-defaults config of test/helpers/ir.ts with listeners on
// 127.0.0.1 port 0, so each test gets fresh ports.
import { DEFAULTS } from "../../../compiler/defaults.js";
import type { ListenAddress, Route, RouteMode, SecretSource, SpoolConfig } from "../../../compiler/ir.js";
import { defaultConfig, irRoute, type Mutable } from "../../helpers/ir.js";

export const raw = (value: string): SecretSource => ({ kind: "raw", ref: value, value });

export function listenAt(host: string, port: number): ListenAddress {
  return { host, port, address: `${host}:${port}` };
}

export function pullRoute(path: string, pullPath: string, extra: Partial<Route> = {}, tokens: readonly SecretSource[] | null = null): Route {
  return route(path, { kind: "pull", path: pullPath, tokens }, extra);
}

export function route(path: string, mode: RouteMode, extra: Partial<Route> = {}): Route {
  return irRoute(path, mode, extra);
}

export interface ConfigOptions {
  routes: Route[];
  backend?: SpoolConfig["backend"];
  pullTokens?: string[];
  adminTokens?: string[];
  /** One address for ingress, pull (prefix /pull) and admin (prefix /admin). */
  shared?: boolean;
  maxDepth?: number;
  dropPolicy?: "reject" | "drop_oldest";
  ingressRateLimit?: { rps: number; burst: number } | null;
  patch?: (config: Mutable<SpoolConfig>) => void;
}

export function buildConfig(options: ConfigOptions): SpoolConfig {
  const backend = options.backend ?? "sqlite";
  const shared = options.shared ?? false;
  const config = defaultConfig();
  config.ingress = { listen: listenAt("127.0.0.1", 0), tls: null, rateLimit: options.ingressRateLimit ?? null };
  config.pullApi = {
    ...config.pullApi,
    listen: shared ? listenAt("127.0.0.1", 0) : { host: "127.0.0.1", port: 0, address: "127.0.0.1:0#pull" },
    prefix: shared ? "/pull" : "",
    tokens: (options.pullTokens ?? ["pull-token"]).map(raw),
    maxLeaseTtlMs: 300_000,
    maxWaitMs: 30_000,
  };
  config.adminApi = {
    listen: shared ? listenAt("127.0.0.1", 0) : { host: "127.0.0.1", port: 0, address: "127.0.0.1:0#admin" },
    prefix: shared ? "/admin" : "",
    tokens: (options.adminTokens ?? []).map(raw),
    tls: null,
  };
  config.observability = {
    ...config.observability,
    accessLog: { ...config.observability.accessLog, enabled: false },
    runtimeLog: { ...config.observability.runtimeLog, level: "error" },
    metrics: { ...config.observability.metrics, listen: listenAt("127.0.0.1", 0) },
  };
  config.queueLimits = { maxDepth: options.maxDepth ?? DEFAULTS.maxDepth, dropPolicy: options.dropPolicy ?? "reject" };
  config.routes = options.routes.map((r) => ({ ...r, backend }));
  config.backend = backend;
  options.patch?.(config);
  return config;
}
