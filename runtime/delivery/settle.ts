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
  // Built field by field rather than with conditional spreads: this runs once per delivery.
  const record = (outcome: AttemptRecord["outcome"], deadReason?: string): AttemptRecord => {
    const built: { -readonly [K in keyof AttemptRecord]: AttemptRecord[K] } = { eventId: item.id, route, target, attempt: item.attempt, outcome };
    if (result.statusCode !== undefined) built.statusCode = result.statusCode;
    if (result.outcome !== "acked" && result.error !== undefined) built.error = result.error;
    if (deadReason !== undefined) built.deadReason = deadReason;
    return built;
  };
  if (result.outcome === "acked") return { outcome: "acked", attemptRecord: record("acked") };
  if (result.outcome === "dead") return { outcome: "dead", deadReason: result.deadReason, attemptRecord: record("dead", result.deadReason) };
  const decision = nextDelay(retry, item.attempt, random, result.retryAfterMs);
  if (!decision.retry) return { outcome: "dead", deadReason: decision.deadReason, attemptRecord: record("dead", decision.deadReason) };
  return { outcome: "retry", delayMs: decision.delayMs, attemptRecord: record("retry") };
}
