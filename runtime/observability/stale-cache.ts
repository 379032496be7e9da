// A value refreshed in the background: fresh values are served as they are, values past
// `refreshAfterMs` are served stale while one refresh runs, and values past `maxAgeMs` are waited
// for (docs/decisions.md D32: health details and queue gauges are at most 2 s stale, with
// stale-while-refresh under heavy load, so a burst of probes makes one store query).
import type { Clock } from "../time/clock.js";
import { withDeadline } from "../time/deadline.js";

export interface StaleCacheOptions {
  refreshAfterMs: number;
  maxAgeMs: number;
  clock: Pick<Clock, "now">;
  onError?: (error: unknown) => void;
}

export class StaleWhileRefreshCache<T> {
  readonly #load: () => Promise<T>;
  readonly #options: StaleCacheOptions;
  #value: { data: T; loadedAtMs: number } | undefined;
  #inFlight: Promise<T> | undefined;

  constructor(load: () => Promise<T>, options: StaleCacheOptions) {
    this.#load = load;
    this.#options = options;
  }

  /**
   * The value and when it was loaded. Rejects when the value is past `maxAgeMs` (or there is none)
   * and loading fails, or does not answer within `maxAgeMs` (a store that hangs rather than fails):
   * a value older than the bound is never served as current. A late answer still lands in the cache.
   */
  async get(): Promise<{ data: T; loadedAtMs: number }> {
    const nowMs = this.#options.clock.now();
    const current = this.#value;
    if (current && nowMs - current.loadedAtMs < this.#options.refreshAfterMs) return current;
    if (current && nowMs - current.loadedAtMs < this.#options.maxAgeMs) {
      void this.#refresh().catch(() => undefined);
      return current;
    }
    await withDeadline(this.#refresh(), this.#options.maxAgeMs);
    return this.#value!;
  }

  /** The last loaded value without loading, or undefined. */
  peek(): { data: T; loadedAtMs: number } | undefined {
    return this.#value;
  }

  #refresh(): Promise<T> {
    this.#inFlight ??= this.#load().then(
      (data) => {
        this.#value = { data, loadedAtMs: this.#options.clock.now() };
        this.#inFlight = undefined;
        return data;
      },
      (error: unknown) => {
        this.#inFlight = undefined;
        this.#options.onError?.(error);
        throw error;
      },
    );
    return this.#inFlight;
  }
}
