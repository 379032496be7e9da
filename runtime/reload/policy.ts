// Which config changes a running instance can take (docs/decisions.md D55): routes,
// auth, rate limits (ingress, route and pull_api), labels, pull tokens and limits, admin tokens and
// defaults are live; listeners, prefixes, TLS, the backend, queue limits and retention (the store was
// opened with them, and samples trends every expected_capture_interval) and observability outputs need a restart, and a reload that changes any of them
// is refused whole. Unlike the reference, pull limits (max_batch, lease TTLs, waits) are live: the
// Pull API reads them per request, so nothing holds the old values (docs/decisions.md D21).
import type { SpoolConfig } from "../../compiler/ir.js";

const RESTART_REQUIRED: readonly [name: string, pick: (c: SpoolConfig) => unknown][] = [
  ["ingress.listen", (c) => c.ingress.listen.address],
  ["ingress.tls", (c) => c.ingress.tls],
  ["pull_api.listen", (c) => c.pullApi.listen.address],
  ["pull_api.prefix", (c) => c.pullApi.prefix],
  ["pull_api.tls", (c) => c.pullApi.tls],
  ["pull_api.grpc_listen", (c) => c.pullApi.grpcListen],
  ["admin_api.listen", (c) => c.adminApi.listen.address],
  ["admin_api.prefix", (c) => c.adminApi.prefix],
  ["admin_api.tls", (c) => c.adminApi.tls],
  ["observability.metrics", (c) => c.observability.metrics],
  ["observability.access_log", (c) => c.observability.accessLog],
  ["observability.runtime_log", (c) => c.observability.runtimeLog],
  ["observability.tracing", (c) => c.observability.tracing],
  ["queue.backend", (c) => c.backend],
  ["queue_limits", (c) => c.queueLimits],
  ["retention", (c) => c.retention],
  ["defaults.trend_signals.expected_capture_interval", (c) => c.defaults.trendSignals.expectedCaptureIntervalMs],
];

/** The names of the restart-only settings that differ; empty when the reload can be applied live. */
export function restartRequiredChanges(current: SpoolConfig, next: SpoolConfig): string[] {
  const changes = RESTART_REQUIRED.filter(([, pick]) => JSON.stringify(pick(current)) !== JSON.stringify(pick(next))).map(([name]) => name);
  return [...changes, ...runtimeFlagChanges(current, next)];
}

/**
 * A secret that stays but turns `runtime` on or off (docs/secrets.md): its versions would move
 * between the Spoolfile and the store, which only a restart does. Adding or removing a runtime
 * pool is live; a removed pool's stored versions stay for when it comes back.
 */
function runtimeFlagChanges(current: SpoolConfig, next: SpoolConfig): string[] {
  const before = new Map(current.secrets.map((s) => [s.id, s.runtime]));
  return next.secrets.filter((s) => before.has(s.id) && before.get(s.id) !== s.runtime).map((s) => `secrets.secret ${JSON.stringify(s.id)}.runtime`);
}
