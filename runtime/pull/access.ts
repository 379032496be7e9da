// Who may call the Pull API, whichever binding carries the call (HTTP here, gRPC through the app's
// wiring): the bearer token, the route at the endpoint and the token's allowance, checked in one
// order (docs/api.md "Pull API"), then the `pull_api rate_limit` bucket of the token.
import { apiError, retryAfterHeader, shortPath } from "../errors.js";
import { matchesAny, secretDigest } from "../auth/constant-time.js";
import { BEARER_CHALLENGE } from "../auth/token.js";
import type { RateLimitRegistry } from "../ratelimit/registry.js";
import type { PullRoute, PullState } from "./state.js";

/** A caller whose token is valid for some pull route (`authenticate`), ready for its route check. */
export interface PullCaller {
  readonly token: string;
  /** The token hashed once for both allowlists it is checked against (constant-time.ts). */
  readonly digest: ReturnType<typeof secretDigest>;
}

/** A token outside every allowlist (or none, or not a bearer token) is 401 unauthorized. */
export function authenticate(state: PullState, token: string | undefined | null): PullCaller {
  const digest = typeof token === "string" ? secretDigest(token) : undefined;
  if (typeof token !== "string" || matchesAny(token, state.knownTokens, digest) < 0) {
    throw apiError("unauthorized", "missing or invalid bearer token", { headers: { "WWW-Authenticate": BEARER_CHALLENGE }, closeConnection: true });
  }
  return { token, digest: digest! };
}

/** The pull route at `endpoint` (its pull path, without the prefix), or 404 not_found naming `shown`. */
export function routeAt(state: PullState, endpoint: string, shown: string): PullRoute {
  const pullRoute = state.routes.get(endpoint);
  if (!pullRoute) throw apiError("not_found", `no pull route at ${shown}`, { closeConnection: true });
  return pullRoute;
}

/** A token valid for another route only is 403 forbidden. */
export function authorize(caller: PullCaller, pullRoute: PullRoute): void {
  if (matchesAny(caller.token, pullRoute.tokens, caller.digest) < 0) {
    throw apiError("forbidden", "this token is not allowed for this route", { closeConnection: true });
  }
}

/** Takes one token from the caller's `pull_api rate_limit` bucket; an empty bucket is 429 rate_limited. */
export function takeRateLimit(rateLimits: RateLimitRegistry, caller: PullCaller): void {
  const take = rateLimits.get(caller.token)?.take();
  if (take && !take.ok) {
    throw apiError("rate_limited", "pull_api rate limit exceeded for this token", { headers: retryAfterHeader(take.retryAfterSeconds) });
  }
}

/**
 * The checks after authentication for a binding that names its operation up front (the gRPC
 * worker service): the route at `endpoint` (404), the caller's allowance on it (403), the rate
 * limit (429). `onRoute` is told the route once it is known, before the allowance is checked.
 */
export function admitCaller(state: PullState, rateLimits: RateLimitRegistry, caller: PullCaller, endpoint: string, onRoute?: (route: string) => void): PullRoute {
  const pullRoute = routeAt(state, endpoint, shortPath(endpoint));
  onRoute?.(pullRoute.route.path);
  authorize(caller, pullRoute);
  takeRateLimit(rateLimits, caller);
  return pullRoute;
}
