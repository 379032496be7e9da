// KeepError: every failure a consumer sees. `status` is the HTTP status (undefined without a
// response); `code` is the server's code, Node's code for transport/TLS failures, or a refusal
// code (invalid_path, invalid_name, name_collision, empty_listing). Messages never hold a value or
// the token.

const RETRYABLE = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EAI_AGAIN"]);

export class KeepError extends Error {
  override readonly name = "KeepError";
  readonly status: number | undefined;
  readonly code: string;
  readonly is_retryable: boolean;

  constructor(message: string, code: string, status?: number, retryable?: boolean) {
    super(message);
    this.code = code;
    this.status = status;
    this.is_retryable = retryable ?? (status === undefined ? RETRYABLE.has(code) : status === 503);
  }
}

/** A refused set or input: nothing was read. */
export function refusal(code: "invalid_path" | "invalid_name" | "name_collision" | "empty_listing", message: string): KeepError {
  return new KeepError(message, code, undefined, false);
}
