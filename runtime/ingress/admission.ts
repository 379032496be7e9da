// Admission, after the request verified: the rate limit that applies to its route, then adaptive
// backpressure (backpressure.ts). Each refusal is a counted IngressRefusal.
import { apiError, retryAfterHeader } from "../errors.js";
import type { SpoolMetrics } from "../observability/metrics.js";
import type { RateLimitRegistry } from "../ratelimit/registry.js";
import type { BackpressureReason } from "./backpressure.js";
import { refuse, type IngressRefusal } from "./refusal.js";
import { GLOBAL_RATE_LIMIT_KEY, type IngressRoute } from "./state.js";

export interface AdmissionDeps {
  rateLimits: RateLimitRegistry;
  metrics: SpoolMetrics;
  backpressure(): BackpressureReason | null;
}

export function admit(deps: AdmissionDeps, settings: IngressRoute, hasGlobalLimit: boolean): void {
  // A route's own rate limit replaces the global one for that route (docs/spoolfile.md "Routes"):
  // one bucket decides, so a refusal never spends a token of another bucket.
  if (settings.rateLimitKey !== null) {
    const routeTake = deps.rateLimits.get(settings.rateLimitKey)?.take();
    if (routeTake && !routeTake.ok) throw rateLimited(routeTake.retryAfterSeconds, "route");
  } else if (hasGlobalLimit) {
    const globalTake = deps.rateLimits.get(GLOBAL_RATE_LIMIT_KEY)?.take();
    if (globalTake && !globalTake.ok) throw rateLimited(globalTake.retryAfterSeconds, "ingress");
  }
  const pressure = deps.backpressure();
  if (pressure) {
    deps.metrics.ingress.adaptiveBackpressure.inc({ reason: pressure });
    deps.metrics.ingress.adaptiveBackpressureApplied.inc();
    throw refuse(
      "adaptive_backpressure",
      apiError("adaptive_backpressure", `the queue is under pressure (${pressure}); retry later`, { surface: "ingress", headers: retryAfterHeader(5) }),
    );
  }
}

function rateLimited(retryAfterSeconds: number, scope: string): IngressRefusal {
  return refuse("rate_limit", apiError("rate_limited", `${scope} rate limit exceeded`, { surface: "ingress", headers: retryAfterHeader(retryAfterSeconds) }));
}
