// A value fetched at most once per `maxAgeMs`, shared by concurrent readers. Scrapes read every
// queue gauge in one pass; they must share one store query, and the values may be at most 2 s
// stale (docs/decisions.md D32).
import type { NowClock } from "../time/clock.js";

export class SnapshotCache<T> {
  readonly #load: () => Promise<T>;
  readonly #maxAgeMs: number;
  readonly #clock: NowClock;
  #value: T | undefined;
  #loadedAtMs = Number.NEGATIVE_INFINITY;
  #inFlight: Promise<T | undefined> | undefined;

  constructor(load: () => Promise<T>, options: { maxAgeMs: number; clock: NowClock }) {
    this.#load = load;
    this.#maxAgeMs = options.maxAgeMs;
    this.#clock = options.clock;
  }

  /**
   * The cached value if it is fresh enough, otherwise a new one. When loading fails the answer is
   * undefined: the last value is past its age by then, and a stale value must not pass for a current
   * one. The failure is reported to `onError`.
   */
  async get(onError?: (error: unknown) => void): Promise<T | undefined> {
    if (this.#clock.now() - this.#loadedAtMs <= this.#maxAgeMs) return this.#value;
    this.#inFlight ??= this.#load().then(
      (value) => {
        this.#value = value;
        this.#loadedAtMs = this.#clock.now();
        this.#inFlight = undefined;
        return value;
      },
      (error: unknown) => {
        this.#inFlight = undefined;
        onError?.(error);
        return undefined;
      },
    );
    return this.#inFlight;
  }
}
