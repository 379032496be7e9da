// Everything ingress derives from one config, built once per (re)load and swapped as a whole.
import type { SpoolConfig } from "../../compiler/ir.js";
import type { RateLimitSettings } from "../ratelimit/bucket.js";
import { ingressAuthFor } from "./auth-settings.js";
import { buildRouteTable, type RouteTable } from "./routes.js";
import type { IngressAuth } from "./verify/index.js";

export const GLOBAL_RATE_LIMIT_KEY = "ingress";
export const routeRateLimitKey = (routePath: string) => `route:${routePath}`;

export interface IngressState {
  readonly routes: RouteTable;
  /** Verifier settings by route path. */
  readonly auth: ReadonlyMap<string, IngressAuth>;
  readonly hasGlobalRateLimit: boolean;
}

export function buildIngressState(config: SpoolConfig): IngressState {
  const routes = buildRouteTable(config.routes);
  const auth = new Map<string, IngressAuth>();
  for (const entry of routes.entries) auth.set(entry.route.path, ingressAuthFor(entry.route.auth));
  return { routes, auth, hasGlobalRateLimit: config.ingress.rateLimit !== null };
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
