// Shapes shared by the credential checks (ingress verifiers, Pull and Admin API tokens): a request
// as plain values in, a verdict out.

/** Node's IncomingHttpHeaders shape: lower-case names. */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

export interface InboundRequest {
  method: string;
  /** URL path without the query string, as received. */
  path: string;
  headers: RequestHeaders;
  body: Buffer;
  /** Current time; a parameter so tolerance and rotation are testable without sleeping. */
  nowMs: number;
}

export type VerifyFailureReason =
  | "missing_credentials"
  | "malformed_credentials"
  | "invalid_credentials"
  | "timestamp_out_of_tolerance"
  | "no_secret_valid";

export type VerifyFailure = { ok: false; reason: VerifyFailureReason };

/**
 * An IR RotatingSecret (compiler/ir.ts) as the credential checks and the signer use it: its value
 * resolved, valid from `validFromMs` (inclusive) until `validUntilMs` (exclusive), absent = unbounded.
 */
export interface ResolvedSecret {
  readonly value: Buffer | string;
  readonly validFromMs?: number;
  readonly validUntilMs?: number;
}

export function headerValue(headers: RequestHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(", ") : value;
}

export function fail(reason: VerifyFailureReason): VerifyFailure {
  return { ok: false, reason };
}
