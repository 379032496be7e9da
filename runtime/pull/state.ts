// What the Pull API derives from one config: routes by pull path, the token allowlists and the
// rate-limit buckets they ask for.
import type { RateLimit, Route, SpoolConfig } from "../../compiler/ir.js";
import { secretValues } from "../auth/secrets.js";
import type { RateLimitSettings } from "../ratelimit/bucket.js";
import type { PullLimits } from "./ops.js";

export interface PullRoute {
  readonly route: Route;
  /** The allowlist for this route: its own tokens, which REPLACE the global list, or the global list. */
  readonly tokens: readonly string[];
}

export interface PullState {
  /** Keyed by the route's `pull { path }` (relative to the prefix). */
  readonly routes: ReadonlyMap<string, PullRoute>;
  /** Every token valid for some route: a token outside it is 401, inside it but not the route's 403. */
  readonly knownTokens: readonly string[];
  readonly limits: PullLimits;
  /** `pull_api { rate_limit }`: applied per bearer token; null means no limit. */
  readonly rateLimit: RateLimit | null;
  /** `pull_api { sse_keepalive; sse_max_connection }`, read when a stream opens. */
  readonly stream: StreamSettings;
}

export interface StreamSettings {
  readonly keepaliveMs: number;
  /** null: a stream runs until the client or the server closes it. */
  readonly maxConnectionMs: number | null;
}

export function buildPullState(config: SpoolConfig): PullState {
  const globalTokens = secretValues(config.pullApi.tokens);
  const known = new Set(globalTokens);
  const routes = new Map<string, PullRoute>();
  for (const route of config.routes) {
    if (route.mode.kind !== "pull") continue;
    const tokens = route.mode.tokens === null ? globalTokens : secretValues(route.mode.tokens);
    for (const token of tokens) known.add(token);
    routes.set(route.mode.path, { route, tokens });
  }
  const { maxBatch, maxLeaseBatch, defaultLeaseTtlMs, maxLeaseTtlMs, defaultMaxWaitMs, maxWaitMs } = config.pullApi;
  return {
    routes,
    knownTokens: [...known],
    limits: { maxBatch, maxLeaseBatch, defaultLeaseTtlMs, maxLeaseTtlMs, defaultMaxWaitMs, maxWaitMs },
    rateLimit: config.pullApi.rateLimit,
    stream: { keepaliveMs: config.pullApi.sseKeepaliveMs, maxConnectionMs: config.pullApi.sseMaxConnectionMs },
  };
}

/**
 * One bucket per known bearer token, keyed by the token, so one worker fleet cannot use up another's
 * allowance. A token shared by several routes has one bucket across them.
 */
export function pullRateLimits(state: PullState): Map<string, RateLimitSettings> {
  const limits = new Map<string, RateLimitSettings>();
  if (state.rateLimit) for (const token of state.knownTokens) limits.set(token, state.rateLimit);
  return limits;
}

/**
 * Active leases of every pull route of this config, zeros included, from the store's leased counts
 * by route (spool_pull_lease_active). Push and exec routes lease too, but not through the Pull API.
 */
export function activeLeasesByPullRoute(state: PullState, leasedByRoute: Readonly<Record<string, number>>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const { route } of state.routes.values()) counts[route.path] = leasedByRoute[route.path] ?? 0;
  return counts;
}
