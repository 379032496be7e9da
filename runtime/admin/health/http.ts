// GET /healthz: a cheap liveness answer for probes, and ?details=1 with the diagnostics object.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Clock } from "../../time/clock.js";
import { apiError } from "../../errors.js";
import { sendJson } from "../../http/respond.js";
import { setRequestRoute } from "../../tracing/tracing.js";
import type { SpoolMetrics } from "../../observability/metrics.js";
import type { MemoryStoreStats } from "../../store/reports.js";
import { healthDetails, type ConfigIdentity, type TrendSignalsView } from "./details.js";
import { STATS_MAX_AGE_MS, STATS_REFRESH_AFTER_MS, type QueueStatsSource } from "../../observability/queue-stats.js";
import { StaleWhileRefreshCache } from "../../observability/stale-cache.js";

export interface HealthDeps {
  /** The memory backend's footprint and guard numbers; null for the other backends. */
  memoryStats(): MemoryStoreStats | null;
  stats: QueueStatsSource;
  metrics: SpoolMetrics;
  clock: Clock;
  config(): ConfigIdentity;
  /** Trend signals from the backlog analysis when one is wired (the Admin API's); none otherwise. */
  trendSignals?: () => Promise<TrendSignalsView>;
}

export interface HealthEndpoint {
  /** True for the one request that needs no admin token: bare `GET /healthz` (docs/decisions.md D28). */
  isBareProbe(req: IncomingMessage, path: string): boolean;
  /** Handles /healthz (bare or with a query); false for any other path. */
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean>;
}

export function createHealthEndpoint(deps: HealthDeps): HealthEndpoint {
  // Trend signals are part of the queue diagnostics: cached and served stale-while-refresh like the
  // queue stats, so a burst of detail probes makes one backlog query, not one each.
  const trendSignals = deps.trendSignals
    ? new StaleWhileRefreshCache(deps.trendSignals, { refreshAfterMs: STATS_REFRESH_AFTER_MS, maxAgeMs: STATS_MAX_AGE_MS, clock: deps.clock })
    : undefined;
  return {
    isBareProbe: (req, path) => path === "/healthz" && (req.method === "GET" || req.method === "HEAD") && !(req.url ?? "").includes("?"),
    async handle(req, res, path) {
      if (path !== "/healthz") return false;
      setRequestRoute(req, "/healthz");
      if (req.method !== "GET" && req.method !== "HEAD") {
        throw apiError("method_not_allowed", "health is read with GET", { headers: { Allow: "GET, HEAD" } });
      }
      const query = new URLSearchParams((req.url ?? "").split("?")[1] ?? "");
      const details = query.get("details");
      if (details === null || details === "0" || details === "false") {
        sendJson(res, 200, { ok: true });
        return true;
      }
      const body = await healthDetails({
        nowMs: deps.clock.now(),
        queue: await loadQueue(deps.stats),
        metrics: deps.metrics,
        memory: deps.memoryStats(),
        trendSignals: trendSignals ? await trendSignals.get().then((cached) => cached.data, () => emptySignals()) : emptySignals(),
        config: deps.config(),
      });
      sendJson(res, body.ok ? 200 : 503, body);
      return true;
    },
  };
}

async function loadQueue(stats: QueueStatsSource) {
  try {
    return { ok: true as const, stats: (await stats.get()).data };
  } catch {
    return { ok: false as const, error: "queue store unavailable" };
  }
}

const emptySignals = (): TrendSignalsView => ({ signals: [], operator_actions: [] });
