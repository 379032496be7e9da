// What the dispatcher does with one attempt's result: ack, nack with a delay, or dead — and the
// attempt record that says so. Pure, so the retry rules can be checked with values.
import type { AttemptResult } from "./classify.js";
import type { AttemptRecord, Leased } from "./queue.js";
import { nextDelay, type RetryPolicy } from "./retry.js";

export type Settlement =
  | { readonly outcome: "acked"; readonly attemptRecord: AttemptRecord }
  | { readonly outcome: "retry"; readonly delayMs: number; readonly attemptRecord: AttemptRecord }
  | { readonly outcome: "dead"; readonly deadReason: string; readonly attemptRecord: AttemptRecord };

export function decideSettlement(result: AttemptResult, retry: RetryPolicy, item: Pick<Leased, "id" | "attempt">, route: string, target: string, random: () => number): Settlement {
  const base = {
    eventId: item.id,
    route,
    target,
    attempt: item.attempt,
    ...(result.statusCode !== undefined ? { statusCode: result.statusCode } : {}),
    ...("error" in result && result.error !== undefined ? { error: result.error } : {}),
  };
  if (result.outcome === "acked") return { outcome: "acked" as const, attemptRecord: { ...base, outcome: "acked" as const } };
  if (result.outcome === "dead") {
    return { outcome: "dead" as const, deadReason: result.deadReason, attemptRecord: { ...base, outcome: "dead" as const, deadReason: result.deadReason } };
  }
  const decision = nextDelay(retry, item.attempt, random, result.retryAfterMs);
  if (!decision.retry) {
    return { outcome: "dead" as const, deadReason: decision.deadReason, attemptRecord: { ...base, outcome: "dead" as const, deadReason: decision.deadReason } };
  }
  return { outcome: "retry" as const, delayMs: decision.delayMs, attemptRecord: { ...base, outcome: "retry" as const } };
}
