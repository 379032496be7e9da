// Time for everything that tests need to control (lease expiry, nack delays, retention, long polls).
// Logic reads `clock.now()` instead of `Date.now()` and waits with `clock.sleep()`, so a TestClock
// can move time forward without the test sleeping.

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Resolves after `ms` of this clock's time; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The part of a Clock that only reads the time (rate limits, caches, logs). */
export type NowClock = Pick<Clock, "now">;

/**
 * The longest delay setTimeout takes (2^31 − 1 ms, 24.8 days). Node fires a longer one after 1 ms
 * with a TimeoutOverflowWarning, which turned a 30-day nack delay into a busy loop of wake-ups.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timeout's delay as setTimeout can hold it: longer ones wait the longest it can (24.8 days). */
export function timerDelayMs(ms: number): number {
  return Math.min(Math.max(0, ms), MAX_TIMER_MS);
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted", "AbortError");
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortReason(signal!));
      };
      const wake = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      // Past MAX_TIMER_MS the sleep goes on in steps setTimeout can hold.
      const wait = (leftMs: number): NodeJS.Timeout =>
        leftMs > MAX_TIMER_MS ? setTimeout(() => (timer = wait(leftMs - MAX_TIMER_MS)), MAX_TIMER_MS) : setTimeout(wake, leftMs);
      let timer = wait(Math.max(0, ms));
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  },
};

interface Sleeper {
  wakeAtMs: number;
  resolve: () => void;
}

/** A clock that only moves when the test calls `advance`/`set`; sleepers wake when their time is reached. */
export class TestClock implements Clock {
  private currentMs: number;
  private sleepers: Sleeper[] = [];

  constructor(startMs = Date.UTC(2030, 0, 1)) {
    this.currentMs = startMs;
  }

  now(): number {
    return this.currentMs;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      if (ms <= 0) return resolve();
      const sleeper: Sleeper = {
        wakeAtMs: this.currentMs + ms,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        reject(abortReason(signal!));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.sleepers.push(sleeper);
    });
  }

  /** Moves time forward and wakes every sleeper whose time has come. */
  advance(ms: number): void {
    this.set(this.currentMs + ms);
  }

  set(epochMs: number): void {
    if (epochMs < this.currentMs) throw new Error("TestClock cannot go backwards");
    this.currentMs = epochMs;
    const due = this.sleepers.filter((s) => s.wakeAtMs <= epochMs);
    this.sleepers = this.sleepers.filter((s) => s.wakeAtMs > epochMs);
    for (const s of due) s.resolve();
  }

  /** Number of pending sleepers, so tests can wait until a long poll is actually parked. */
  get pendingSleepers(): number {
    return this.sleepers.length;
  }
}
