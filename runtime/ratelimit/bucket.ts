// Token bucket for `rate_limit { rps F; burst N }` of ingress, routes and the Pull API
// (docs/spoolfile.md; docs/decisions.md D20).
import type { RateLimit } from "../../compiler/ir.js";
import type { NowClock } from "../time/clock.js";

/** The IR's `rate_limit`: rps may be fractional (0.5 = one request every 2 s); burst is the bucket size. */
export type RateLimitSettings = RateLimit;

export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

export class TokenBucket {
  readonly settings: Readonly<RateLimitSettings>;
  readonly #clock: NowClock;
  #tokens: number;
  #refilledAtMs: number;

  constructor(settings: RateLimitSettings, clock: NowClock) {
    if (!(settings.rps > 0) || !Number.isFinite(settings.rps)) throw new RangeError(`rate limit rps must be > 0, got ${settings.rps}`);
    if (!Number.isInteger(settings.burst) || settings.burst < 1) throw new RangeError(`rate limit burst must be an integer >= 1, got ${settings.burst}`);
    this.settings = Object.freeze({ rps: settings.rps, burst: settings.burst });
    this.#clock = clock;
    this.#tokens = settings.burst;
    this.#refilledAtMs = clock.now();
  }

  /** Tokens available now (fractional while refilling). */
  get tokens(): number {
    this.#refill();
    return this.#tokens;
  }

  take(): TakeResult {
    this.#refill();
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return { ok: true };
    }
    // Whole seconds for Retry-After, at least 1: the time until one full token is back.
    const waitSeconds = (1 - this.#tokens) / this.settings.rps;
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(waitSeconds - 1e-9)) };
  }

  #refill(): void {
    const nowMs = this.#clock.now();
    // A clock that steps backwards (NTP) must not drain or overfill the bucket.
    const elapsedMs = Math.max(0, nowMs - this.#refilledAtMs);
    this.#refilledAtMs = Math.max(this.#refilledAtMs, nowMs);
    this.#tokens = Math.min(this.settings.burst, this.#tokens + (elapsedMs * this.settings.rps) / 1000);
  }
}
