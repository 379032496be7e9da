// Push/exec retry schedule (docs/decisions.md D34).
// Pure: the caller passes the attempt number, a random source and any Retry-After it saw.
import type { RetryPolicy } from "../../compiler/ir.js";

/** The IR's policy: `retry … max N` allows N retries, so at most N+1 deliveries; defaults in compiler/defaults.ts. */
export type { RetryPolicy };

/** A receiver may ask for a longer wait, but never for longer than this (docs/decisions.md D34). */
export const retryAfterCapMs = 3_600_000;

export type RetryDecision = { retry: true; delayMs: number } | { retry: false; deadReason: "max_retries" };

/**
 * Decides what follows a failed delivery numbered `attempt` (1 = first delivery).
 * `random` returns a value in [0, 1) like Math.random; tests inject a fixed one.
 */
export function nextDelay(policy: RetryPolicy, attempt: number, random: () => number, retryAfterMs?: number): RetryDecision {
  // Attempts 1..max may be followed by a retry; the delivery numbered max+1 was the last one.
  if (attempt > policy.maxRetries) return { retry: false, deadReason: "max_retries" };
  const exponent = Math.max(0, attempt - 1);
  // Math.min before the power overflows: 2^1100 is Infinity, which min() still caps correctly.
  const backoffMs = Math.min(policy.baseMs * 2 ** exponent, policy.capMs);
  const spread = policy.jitter * (2 * random() - 1);
  let delayMs = Math.max(0, Math.round(backoffMs * (1 + spread)));
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs > delayMs) {
    // Retry-After only lengthens the wait: a receiver cannot make us hammer it faster than our schedule.
    delayMs = Math.max(delayMs, Math.min(Math.round(retryAfterMs), retryAfterCapMs));
  }
  return { retry: true, delayMs };
}
