// IR for Admin tests that need a config shape the compiler is not asked to produce (the
// end-to-end tests compile real Spoolfile text instead); built on test/helpers/ir.ts.
import { DEFAULTS } from "../../compiler/defaults.js";
import { defaultConfig, irRoute } from "../helpers/ir.js";
import type { PublishPolicy, Route, SpoolConfig, TrendSignals } from "../../compiler/ir.js";

const listen = (port: number) => ({ host: "127.0.0.1", port, address: `127.0.0.1:${port}` });

// Defaults come from the compiler's one table, never copied here.
export const DEFAULT_TREND_SIGNALS: TrendSignals = structuredClone(DEFAULTS.trendSignals);
export const DEFAULT_PUBLISH_POLICY: PublishPolicy = structuredClone(DEFAULTS.publishPolicy);

export function pullRoute(path: string, overrides: Partial<Route> = {}): Route {
  return irRoute(path, { kind: "pull", path, tokens: null }, overrides);
}

export function deliverRoute(path: string, urls: readonly string[], overrides: Partial<Route> = {}): Route {
  const { retry, timeoutMs, concurrency } = DEFAULTS.deliver;
  return pullRoute(path, {
    mode: {
      kind: "deliver",
      concurrency,
      targets: urls.map((url) => ({ kind: "http" as const, target: url, url, timeoutMs, retry, headers: [], sign: null })),
    },
    ...overrides,
  });
}

/** The all-defaults config with these routes and publish policy; listeners on 127.0.0.1, retention off. */
export function buildConfig(routes: readonly Route[], policy: Partial<PublishPolicy> = {}): SpoolConfig {
  const config = defaultConfig();
  config.ingress = { ...config.ingress, listen: listen(8080) };
  config.pullApi = { ...config.pullApi, listen: listen(9443) };
  config.observability = { ...config.observability, accessLog: { ...config.observability.accessLog, enabled: false } };
  // No pruning behind a test's back.
  config.retention = { queue: { maxAgeMs: null, pruneIntervalMs: 300_000 }, delivered: { maxAgeMs: null }, dlq: { maxAgeMs: null, maxDepth: null }, attempts: { maxAgeMs: null, maxRows: null } };
  config.defaults = { ...config.defaults, publishPolicy: { ...DEFAULT_PUBLISH_POLICY, ...policy } };
  config.routes = routes;
  return config;
}
