// Everything ingress derives from one config, built once per (re)load and swapped as a whole.
import { routeTargets, type Route, type SpoolConfig } from "../../compiler/ir.js";
import type { RateLimitSettings } from "../ratelimit/bucket.js";
import { ingressAuthFor } from "./auth-settings.js";
import { canonicalHeaderName } from "./capture.js";
import { buildRouteTable, type RouteTable } from "./routes.js";
import type { IngressAuth } from "./verify/index.js";

export const GLOBAL_RATE_LIMIT_KEY = "ingress";
export const routeRateLimitKey = (routePath: string) => `route:${routePath}`;

/** What ingress needs of one inbound route, derived once per (re)load rather than per request. */
export interface IngressRoute {
  /** Verifier settings. */
  readonly auth: IngressAuth;
  /** The route's rate-limit bucket key; null when the route has no rate limit (and so no bucket). */
  readonly rateLimitKey: string | null;
  /** One stored copy per target (fan-out). */
  readonly targets: readonly string[];
  /**
   * Header names (canonical) only forward auth may bring into the stored headers, its
   * `copy_headers`: a sender's own copy is never stored (capture.ts). Null without forward auth.
   */
  readonly reservedHeaders: ReadonlySet<string> | null;
}

export interface IngressState {
  readonly routes: RouteTable;
  /** Per-route settings by route path. */
  readonly byPath: ReadonlyMap<string, IngressRoute>;
  readonly hasGlobalRateLimit: boolean;
}

export function buildIngressState(config: SpoolConfig): IngressState {
  const routes = buildRouteTable(config.routes);
  const byPath = new Map<string, IngressRoute>();
  for (const { route } of routes.entries) byPath.set(route.path, ingressRouteFor(route));
  return { routes, byPath, hasGlobalRateLimit: config.ingress.rateLimit !== null };
}

export function ingressRouteFor(route: Route): IngressRoute {
  return {
    auth: ingressAuthFor(route.auth),
    rateLimitKey: route.rateLimit ? routeRateLimitKey(route.path) : null,
    targets: routeTargets(route),
    reservedHeaders:
      route.auth.kind === "forward" && route.auth.copyHeaders.length > 0
        ? new Set(route.auth.copyHeaders.map((name) => canonicalHeaderName(name.toLowerCase())))
        : null,
  };
}

/** The rate-limit buckets a config asks for, keyed as the ingress handler looks them up. */
export function ingressRateLimits(config: SpoolConfig): Map<string, RateLimitSettings> {
  const limits = new Map<string, RateLimitSettings>();
  if (config.ingress.rateLimit) limits.set(GLOBAL_RATE_LIMIT_KEY, config.ingress.rateLimit);
  for (const route of config.routes) {
    if (route.channel === "inbound" && route.rateLimit) limits.set(routeRateLimitKey(route.path), route.rateLimit);
  }
  return limits;
}
