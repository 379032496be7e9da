// Maps what happened to one delivery attempt onto the documented outcomes
// (docs/delivery.md; docs/decisions.md D34).

export type DeadReason = "no_retry" | "max_retries" | "policy_denied";

/** What a single attempt says, before the retry policy decides whether a retry is still allowed. */
export type AttemptResult =
  | { outcome: "acked"; statusCode?: number }
  | { outcome: "retry"; statusCode?: number; error?: string; retryAfterMs?: number }
  | { outcome: "dead"; deadReason: "no_retry" | "policy_denied"; statusCode?: number; error?: string };

export type StatusClass = "acked" | "retry" | "no_retry";

/** 2xx acks; 5xx, 408 and 429 retry; every other status (3xx included) is final. */
export function classifyStatus(statusCode: number): StatusClass {
  if (statusCode >= 200 && statusCode < 300) return "acked";
  if (statusCode >= 500 || statusCode === 408 || statusCode === 429) return "retry";
  return "no_retry";
}

/** The attempt result for an HTTP response status. */
export function resultForStatus(statusCode: number, retryAfterMs?: number): AttemptResult {
  switch (classifyStatus(statusCode)) {
    case "acked":
      return { outcome: "acked", statusCode };
    case "retry":
      return retryAfterMs === undefined
        ? { outcome: "retry", statusCode, error: `status ${statusCode}` }
        : { outcome: "retry", statusCode, error: `status ${statusCode}`, retryAfterMs };
    case "no_retry":
      return { outcome: "dead", deadReason: "no_retry", statusCode, error: `status ${statusCode}` };
  }
}

/** Network errors and timeouts are transient: the receiver may be back on the next attempt. */
export function resultForNetworkError(error: string): AttemptResult {
  return { outcome: "retry", error };
}

/** An egress refusal will refuse again on every attempt, so it is dead at once and never retried. */
export function resultForPolicyDenial(error: string): AttemptResult {
  return { outcome: "dead", deadReason: "policy_denied", error };
}
