// Delays between retries: exponential with jitter, so a fleet of workers that lost the server at the
// same moment does not come back in step.
import { PullError } from "./errors.js";

export interface BackoffOptions {
  /** First delay (ms). */
  initialMs: number;
  /** Largest delay (ms). */
  maxMs: number;
}

const TRANSPORT_BACKOFF: BackoffOptions = { initialMs: 100, maxMs: 10_000 };

/** The delay before retry number `failures` (1-based): initial × 2^(failures−1), capped, then jittered to 50–100 %. */
export function backoffDelay(failures: number, options: BackoffOptions = TRANSPORT_BACKOFF): number {
  const ceiling = Math.min(options.maxMs, options.initialMs * 2 ** Math.min(30, Math.max(0, failures - 1)));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** The delay before retrying a failed call: the server's Retry-After when it sent one, else backoffDelay. */
export function retryAfterOrBackoff(error: unknown, failures: number): number {
  return error instanceof PullError && error.retryAfterMs !== undefined ? error.retryAfterMs : backoffDelay(failures);
}

/**
 * The default nack delay of a handler that threw: 1 s on the first attempt, doubling per attempt up
 * to 5 min, jittered.
 */
export function defaultRetryDelay(attempt: number): number {
  return backoffDelay(attempt, { initialMs: 1_000, maxMs: 300_000 });
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
