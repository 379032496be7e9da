// The one error the client library throws for a Pull API call: an HTTP answer other than success
// (status, code and detail from the Pull API's `{code, detail}` body), or a transport failure
// (status 0, code "network": the connection failed, was reset, or timed out).

export class PullError extends Error {
  /** The HTTP status; 0 when no answer arrived. */
  readonly status: number;
  /** The Pull API's error code (`unauthorized`, `rate_limited`, `queue_overload`, …) or "network". */
  readonly code: string;
  readonly detail: string;
  /** From `Retry-After`, when the server sent one. */
  readonly retryAfterMs: number | undefined;

  constructor(status: number, code: string, detail: string, options: { retryAfterMs?: number; cause?: unknown } = {}) {
    super(status === 0 ? `${code}: ${detail}` : `${status} ${code}: ${detail}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "PullError";
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.retryAfterMs = options.retryAfterMs;
  }

  /** Worth retrying as it is: no answer, 429, or a 5xx. A 4xx other than 429 needs a change first. */
  get transient(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

/** An aborted wait or request: the caller asked for it (stop()), not a failure. */
export function isAbort(error: unknown): boolean {
  return error instanceof Error && (error.name === "AbortError" || (error as { code?: string }).code === "UND_ERR_ABORTED");
}
