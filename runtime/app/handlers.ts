// The three mounts' request handlers, each built by its feature from the app's parts: ingress, the
// Pull API, and the admin listener (its front door, health, and the Admin API's routes), each with a
// SERVER span per request when tracing runs; and the Pull API's operations the HTTP mount and the gRPC
// worker service share.
import { createAdminFront } from "../admin/front.js";
import type { MountHandler, MountName } from "../http/listeners.js";
import { currentBackpressure } from "../ingress/backpressure.js";
import { createIngressHandler } from "../ingress/handler.js";
import type { MemoryFootprint } from "../observability/store-metrics.js";
import { createPullHandler } from "../pull/http.js";
import { createPullOps, type PullOps } from "../pull/ops.js";
import type { LiveState } from "./live.js";
import type { AppContext, AppDeps } from "./types.js";

/** The Pull API's operations, one instance behind the HTTP binding and the gRPC worker service. */
export function appPullOps(context: AppContext, live: LiveState): PullOps {
  const pullLogger = context.logger.child({ component: "pull" });
  return createPullOps({
    store: context.store,
    clock: context.clock,
    metrics: context.metrics,
    limits: () => live.current().pull.limits,
    onStoreError: (operation, error) => pullLogger.error("pull_store_failed", { operation, error }),
  });
}

export function mountHandlers(context: AppContext, live: LiveState, pullOps: PullOps, memoryFootprint: MemoryFootprint, deps: AppDeps): Record<MountName, MountHandler> {
  const { store, clock, metrics, logger, queueStats } = context;
  const ingress = createIngressHandler({
    state: () => live.current().ingress,
    store,
    clock,
    metrics,
    nonces: live.nonces,
    runtimeSecrets: context.secrets,
    rateLimits: live.ingressRateLimits,
    logger: logger.child({ component: "ingress" }),
    backpressure: () => currentBackpressure(live.current().config, queueStats),
  });
  const pull = createPullHandler({
    state: () => live.current().pull,
    rateLimits: live.pullRateLimits,
    metrics,
    clock,
    shutdownSignal: context.shutdownSignal,
    ops: pullOps,
  });
  const admin = createAdminFront({
    tokens: () => live.current().adminTokens,
    health: {
      memoryStats: () => memoryFootprint.stats(),
      stats: queueStats,
      metrics,
      clock,
      config: () => {
        const generation = live.current();
        return { fingerprint: generation.fingerprint, generation: generation.number, loadedAtMs: generation.loadedAtMs };
      },
      trendSignals: deps.trendSignals?.(context),
    },
    routes: deps.admin?.(context),
  });
  const { tracing } = context;
  const config = live.current().config;
  // Prefixes need a restart (runtime/reload/policy.ts), as tracing does: the ones at start hold.
  return {
    ingress: tracing.traceMount("ingress", "", ingress),
    pull: tracing.traceMount("pull", config.pullApi.prefix, pull),
    admin: tracing.traceMount("admin", config.adminApi.prefix, admin),
  };
}
