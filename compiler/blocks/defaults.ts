import type { Directive } from "../../grammar/index.js";
import { readBareBlock, scalar, singleArg } from "../block-reader.js";
import type { CompileContext } from "../context.js";
import { DEFAULTS } from "../defaults.js";
import type { AdaptiveBackpressure, Defaults, DeliverDefaults, EgressPolicy, PublishPolicy, TrendSignals } from "../ir.js";
import { decodeHostRule, decodeInt } from "../values.js";
import { compileRetry } from "./retry.js";

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

// defaults { max_body; max_headers; deliver { … }; egress { … }; publish_policy { … };
//            adaptive_backpressure { … }; trend_signals { … } }
export function compileDefaults(cx: CompileContext, d: Directive | undefined): Defaults {
  const out: Mutable<Defaults> = {
    maxBodyBytes: DEFAULTS.maxBodyBytes,
    maxHeadersBytes: DEFAULTS.maxHeadersBytes,
    deliver: DEFAULTS.deliver,
    egress: DEFAULTS.egress,
    publishPolicy: DEFAULTS.publishPolicy,
    adaptiveBackpressure: DEFAULTS.adaptiveBackpressure,
    trendSignals: DEFAULTS.trendSignals,
  };
  if (!d) return out;
  readBareBlock(cx, d, "defaults", {
    max_body: scalar.size(cx, "max_body", (v) => (out.maxBodyBytes = v)),
    max_headers: scalar.size(cx, "max_headers", (v) => (out.maxHeadersBytes = v)),
    deliver: { handle: (x) => (out.deliver = compileDeliverDefaults(cx, x)) },
    egress: { handle: (x) => (out.egress = compileEgress(cx, x)) },
    publish_policy: { handle: (x) => (out.publishPolicy = compilePublishPolicy(cx, x)) },
    adaptive_backpressure: { handle: (x) => (out.adaptiveBackpressure = compileAdaptiveBackpressure(cx, x)) },
    trend_signals: { handle: (x) => (out.trendSignals = compileTrendSignals(cx, x)) },
  });
  // Egress settings with an error (or a misspelt `egres` block) are not the policy the operator meant:
  // deliver targets are not judged against them (deliver-egress.ts), one error per mistake.
  if (cx.failedWithin(d, "egress")) cx.markBroken("block", "defaults › egress");
  return out;
}

function compileDeliverDefaults(cx: CompileContext, d: Directive): DeliverDefaults {
  const out: Mutable<DeliverDefaults> = { ...DEFAULTS.deliver };
  readBareBlock(cx, d, "defaults deliver", {
    retry: { handle: (r) => { const v = compileRetry(cx, r, DEFAULTS.deliver.retry); if (v) out.retry = v; } },
    timeout: scalar.duration(cx, "timeout", (v) => (out.timeoutMs = v!), { positive: true }),
    concurrency: scalar.int(cx, "concurrency", 1, DEFAULTS.deliverConcurrencyMax, (v) => (out.concurrency = v)),
  });
  return out;
}

function compileEgress(cx: CompileContext, d: Directive): EgressPolicy {
  const out: Mutable<EgressPolicy> = { ...DEFAULTS.egress };
  const allow: string[] = [];
  const deny: string[] = [];
  const ruleInto = (list: string[], what: string) => ({
    repeatable: true,
    handle: (r: Directive) => {
      const a = singleArg(cx, r, `${what} <host|*.domain|IP|CIDR>`);
      const v = a && decodeHostRule(cx, a, `egress ${what}`);
      if (v) list.push(v);
    },
  });
  readBareBlock(cx, d, "egress", {
    allow: ruleInto(allow, "allow"),
    deny: ruleInto(deny, "deny"),
    https_only: scalar.bool(cx, "https_only", (v) => (out.httpsOnly = v)),
    redirects: scalar.bool(cx, "redirects", (v) => (out.redirects = v)),
    dns_rebind_protection: scalar.bool(cx, "dns_rebind_protection", (v) => (out.dnsRebindProtection = v)),
  });
  out.allow = allow;
  out.deny = deny;
  return out;
}

function compilePublishPolicy(cx: CompileContext, d: Directive): PublishPolicy {
  const out: Mutable<PublishPolicy> = { ...DEFAULTS.publishPolicy };
  const actorAllow: string[] = [];
  const nonEmptyActor = (a: Directive, name: string, usage: string, why: string, into: string[]) => {
    const arg = singleArg(cx, a, usage);
    if (!arg) return;
    const value = cx.text(arg);
    if (value === "") cx.error(arg.span, "invalid_value", `a non-empty ${name}`, `${name} must not be empty: ${why}`);
    else into.push(value);
  };
  const actorPrefix: string[] = [];
  readBareBlock(cx, d, "publish_policy", {
    direct: scalar.bool(cx, "direct", (v) => (out.direct = v)),
    managed: scalar.bool(cx, "managed", (v) => (out.managed = v)),
    allow_pull_routes: scalar.bool(cx, "allow_pull_routes", (v) => (out.allowPullRoutes = v)),
    allow_deliver_routes: scalar.bool(cx, "allow_deliver_routes", (v) => (out.allowDeliverRoutes = v)),
    require_actor: scalar.bool(cx, "require_actor", (v) => (out.requireActor = v)),
    require_request_id: scalar.bool(cx, "require_request_id", (v) => (out.requireRequestId = v)),
    fail_closed: scalar.bool(cx, "fail_closed", (v) => (out.failClosed = v)),
    actor_allow: { repeatable: true, handle: (a) => nonEmptyActor(a, "actor_allow", 'actor_allow "<actor>"', "no actor is empty", actorAllow) },
    // Empty would admit every actor: most often a placeholder whose variable is unset.
    actor_prefix: { repeatable: true, handle: (a) => nonEmptyActor(a, "actor_prefix", 'actor_prefix "<prefix>"', "an empty prefix would admit every actor", actorPrefix) },
  });
  out.actorAllow = actorAllow;
  out.actorPrefix = actorPrefix;
  return out;
}

function compileAdaptiveBackpressure(cx: CompileContext, d: Directive): AdaptiveBackpressure {
  const out: Mutable<AdaptiveBackpressure> = { ...DEFAULTS.adaptiveBackpressure };
  readBareBlock(cx, d, "adaptive_backpressure", {
    enabled: scalar.bool(cx, "enabled", (v) => (out.enabled = v)),
    min_total: scalar.int(cx, "min_total", 1, 1_000_000_000, (v) => (out.minTotal = v)),
    queued_percent: scalar.int(cx, "queued_percent", 1, 100, (v) => (out.queuedPercent = v)),
    ready_lag: scalar.duration(cx, "ready_lag", (v) => (out.readyLagMs = v!), { positive: true }),
    oldest_queued_age: scalar.duration(cx, "oldest_queued_age", (v) => (out.oldestQueuedAgeMs = v!), { positive: true }),
    sustained_growth: scalar.bool(cx, "sustained_growth", (v) => (out.sustainedGrowth = v)),
  });
  return out;
}

function compileTrendSignals(cx: CompileContext, d: Directive): TrendSignals {
  const out: Mutable<TrendSignals> = { ...DEFAULTS.trendSignals };
  const int = (name: string, key: keyof TrendSignals, max = 1_000_000_000) => ({
    handle: (x: Directive) => {
      const a = singleArg(cx, x, `${name} <number>`);
      const v = a && decodeInt(cx, a, name, 1, max);
      if (v !== undefined) out[key] = v;
    },
  });
  readBareBlock(cx, d, "trend_signals", {
    window: scalar.duration(cx, "window", (v) => (out.windowMs = v!), { positive: true }),
    expected_capture_interval: scalar.duration(cx, "expected_capture_interval", (v) => (out.expectedCaptureIntervalMs = v!), { positive: true }),
    stale_grace_factor: int("stale_grace_factor", "staleGraceFactor"),
    sustained_growth_consecutive: int("sustained_growth_consecutive", "sustainedGrowthConsecutive"),
    sustained_growth_min_samples: int("sustained_growth_min_samples", "sustainedGrowthMinSamples"),
    sustained_growth_min_delta: int("sustained_growth_min_delta", "sustainedGrowthMinDelta"),
    recent_surge_min_total: int("recent_surge_min_total", "recentSurgeMinTotal"),
    recent_surge_min_delta: int("recent_surge_min_delta", "recentSurgeMinDelta"),
    recent_surge_percent: int("recent_surge_percent", "recentSurgePercent", 100_000),
    dead_share_high_min_total: int("dead_share_high_min_total", "deadShareHighMinTotal"),
    dead_share_high_percent: int("dead_share_high_percent", "deadShareHighPercent", 100),
    queued_pressure_min_total: int("queued_pressure_min_total", "queuedPressureMinTotal"),
    queued_pressure_percent: int("queued_pressure_percent", "queuedPressurePercent", 100),
    queued_pressure_leased_multiplier: int("queued_pressure_leased_multiplier", "queuedPressureLeasedMultiplier"),
  });
  return out;
}
