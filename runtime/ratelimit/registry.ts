// Rate-limit buckets by key: ingress keys them by route (plus one for `ingress { rate_limit }`), the
// Pull API by bearer token (`pull_api { rate_limit }`), each in a registry of its own. A registry lives
// outside the compiled config: a reload re-applies settings, and a bucket whose settings did not
// change keeps its tokens, so a reload cannot be used to reset a limit (docs/operations.md "Reload").
import type { NowClock } from "../time/clock.js";
import { TokenBucket, type RateLimitSettings } from "./bucket.js";

export class RateLimitRegistry {
  readonly #clock: NowClock;
  #buckets = new Map<string, TokenBucket>();

  constructor(clock: NowClock) {
    this.#clock = clock;
  }

  /**
   * Installs the limits of a (re)loaded config. Keys absent from `limits` lose their bucket;
   * new keys and keys whose rps or burst changed start with a full bucket.
   */
  apply(limits: ReadonlyMap<string, RateLimitSettings> | Readonly<Record<string, RateLimitSettings>>): void {
    const entries = limits instanceof Map ? [...limits.entries()] : Object.entries(limits);
    const next = new Map<string, TokenBucket>();
    for (const [key, settings] of entries) {
      const current = this.#buckets.get(key);
      const unchanged = current && current.settings.rps === settings.rps && current.settings.burst === settings.burst;
      next.set(key, unchanged ? current : new TokenBucket(settings, this.#clock));
    }
    this.#buckets = next;
  }

  /** The bucket for `key`, or undefined when that key has no rate limit. */
  get(key: string): TokenBucket | undefined {
    return this.#buckets.get(key);
  }

  keys(): string[] {
    return [...this.#buckets.keys()];
  }
}
