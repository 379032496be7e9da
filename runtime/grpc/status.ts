// API errors as gRPC statuses (docs/grpc.md "Status codes"): the error catalogue's HTTP status picks
// the code, the detail becomes the status message, and the catalogue code travels in the trailer
// `spool-error-code` so a client can tell e.g. rate_limited from another refusal.
import { Metadata, status, type ServerErrorResponse } from "@grpc/grpc-js";
import { toApiError, type ApiError } from "../errors.js";

/** gRPC code by the catalogue's HTTP status; anything not listed is INTERNAL. */
const CODE_BY_HTTP_STATUS: Readonly<Record<number, status>> = {
  400: status.INVALID_ARGUMENT,
  401: status.UNAUTHENTICATED,
  // Spool answers a token valid for another route as HTTP does (403), not as UNAUTHENTICATED.
  403: status.PERMISSION_DENIED,
  404: status.NOT_FOUND,
  // A single lease that is unknown or expired; a batch answers OK listing its conflicts.
  409: status.FAILED_PRECONDITION,
  // pull_api rate_limit: the token's bucket is empty (docs/decisions.md D103).
  429: status.RESOURCE_EXHAUSTED,
  503: status.UNAVAILABLE,
};

export function grpcCodeOf(error: ApiError): status {
  return CODE_BY_HTTP_STATUS[error.status] ?? status.INTERNAL;
}

/** The status a failed call answers with; `retry-after` (seconds) rides along where HTTP sends Retry-After. */
export function grpcError(thrown: unknown): ServerErrorResponse {
  const error = toApiError(thrown);
  const metadata = new Metadata();
  metadata.set("spool-error-code", error.code);
  const retryAfter = error.headers["Retry-After"];
  if (retryAfter !== undefined) metadata.set("retry-after", retryAfter);
  return Object.assign(new Error(error.detail), { code: grpcCodeOf(error), details: error.detail, metadata });
}
