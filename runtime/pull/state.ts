// What the Pull API derives from one config: routes by pull path and the token allowlists.
import type { Route, SpoolConfig } from "../../compiler/ir.js";
import { secretValues } from "../ingress/auth-settings.js";
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
  };
}
