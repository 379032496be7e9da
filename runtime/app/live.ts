// The per-config state of the running app, replaced as a whole by a reload (a generation), and the
// state that outlives reloads: a reload must neither reset a rate limit nor reopen a replay window.
import type { SpoolConfig } from "../../compiler/ir.js";
import { secretValues } from "../auth/secrets.js";
import type { Clock } from "../time/clock.js";
import { buildIngressState, ingressRateLimits, type IngressState } from "../ingress/state.js";
import { NonceCache } from "../ingress/verify/index.js";
import { buildPullState, pullRateLimits, type PullState } from "../pull/state.js";
import { RateLimitRegistry } from "../ratelimit/registry.js";

/** Per-config state, replaced as a whole by reload. */
export interface Generation {
  readonly config: SpoolConfig;
  readonly number: number;
  readonly loadedAtMs: number;
  /** sha256 of the file it was compiled from; null when not known (a config built in code). */
  readonly fingerprint: string | null;
  readonly ingress: IngressState;
  readonly pull: PullState;
  readonly adminTokens: readonly string[];
}

export interface LiveState {
  /** The generation serving now; read per request, so a reload never splits one. */
  current(): Generation;
  /** Builds the generation of `next`, applies its rate limits and makes it current; returns its number. */
  swap(next: SpoolConfig, fingerprint: string | null): number;
  readonly ingressRateLimits: RateLimitRegistry;
  readonly pullRateLimits: RateLimitRegistry;
  readonly nonces: NonceCache;
}

export function createLiveState(initial: SpoolConfig, fingerprint: string | null, clock: Clock): LiveState {
  const ingressBuckets = new RateLimitRegistry(clock);
  const pullBuckets = new RateLimitRegistry(clock);
  let generation = buildGeneration(initial, 1, clock.now(), fingerprint);
  ingressBuckets.apply(ingressRateLimits(initial));
  pullBuckets.apply(pullRateLimits(generation.pull));
  return {
    current: () => generation,
    swap(next, nextFingerprint) {
      const candidate = buildGeneration(next, generation.number + 1, clock.now(), nextFingerprint);
      ingressBuckets.apply(ingressRateLimits(next));
      pullBuckets.apply(pullRateLimits(candidate.pull));
      generation = candidate;
      return candidate.number;
    },
    ingressRateLimits: ingressBuckets,
    pullRateLimits: pullBuckets,
    nonces: new NonceCache({ clock }),
  };
}

function buildGeneration(config: SpoolConfig, number: number, loadedAtMs: number, fingerprint: string | null): Generation {
  return {
    config,
    number,
    loadedAtMs,
    fingerprint,
    ingress: buildIngressState(config),
    pull: buildPullState(config),
    adminTokens: secretValues(config.adminApi.tokens),
  };
}
