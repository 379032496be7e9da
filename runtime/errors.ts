// The one catalogue of API error codes and their HTTP status. Handlers throw `apiError(code, …)`;
// nothing else in the runtime picks a 4xx/5xx status by hand.
//
// Store failures reach clients through storeApiError() below, the one StoreError → API error mapping.
//
// The catalogue is docs/api.md "Error catalogue"; the decisions behind its statuses are in
// docs/decisions.md (ingress D10–D17, Pull API D18–D24, Admin API D25–D32).

import { StoreError, type StoreErrorCode } from "./store/store.js";

export const ERROR_STATUS = {
  // Pull API (docs/api.md "Pull API").
  invalid_body: 400,
  unauthorized: 401,
  forbidden: 403,
  lease_conflict: 409,
  rate_limited: 429,
  queue_overload: 503,

  // Admin API (docs/api.md "Admin API").
  invalid_query: 400,
  not_found: 404,
  method_not_allowed: 405,
  duplicate_id: 409,
  queue_full: 429,
  route_publish_disabled: 403,
  global_publish_disabled: 403,
  scoped_publish_disabled: 403,
  managed_selector_required: 400,
  scoped_publish_required: 400,
  managed_endpoint_not_found: 404,
  managed_resolver_missing: 503,
  management_route_already_mapped: 409,
  management_route_publish_disabled: 409,
  management_route_target_mismatch: 409,
  payload_too_large: 413,
  headers_too_large: 413,
  invalid_header: 400,
  audit_actor_required: 400,
  audit_request_id_required: 400,
  audit_actor_not_allowed: 403,

  // Ingress and Admin API (docs/api.md "Ingress", "Admin API").
  bad_request: 400,
  adaptive_backpressure: 503,
  memory_pressure: 503,
  store_unavailable: 503,
  audit_reason_required: 400,

  // Codes the reference system also uses, kept by Spool (docs/api.md "Error catalogue").
  route_not_found: 404,
  target_unresolvable: 400,
  managed_target_mismatch: 400,
  invalid_payload_b64: 400,
  invalid_received_at: 400,
  invalid_next_run_at: 400,
  selector_scope_forbidden: 400,
  pull_route_publish_disabled: 403,
  deliver_route_publish_disabled: 403,
  management_route_not_found: 404,
  management_route_backlog_active: 409,
  internal_error: 500,

  // Spool: a management PUT/DELETE whose rewritten Spoolfile could not be edited or was refused by
  // the reload; the previous file is back in place and the old config still serves.
  management_apply_failed: 409,

  // Spool: `auth forward` could not get an answer (timeout, network error, 5xx), so ingress fails
  // closed with 503 (docs/api.md "Error catalogue") under a code of its own.
  auth_unavailable: 503,

  // Spool: an `Expect` header other than 100-continue (RFC 9110 §10.1.1), which Node answered with an
  // empty 417 of its own.
  expectation_failed: 417,

  // Spool: a request whose body was still arriving when shutdown's deadline came (SIGTERM).
  shutting_down: 503,

  // Spool: headers or body not received within the listener's timeouts (slowloris, a body that
  // stops midway); the connection is closed after it.
  request_timeout: 408,

  // Spool: a transfer coding other than chunked (RFC 9112 §6.1: 501). Node would hand the coded
  // bytes on as the body, and a `gzip, chunked` upload would be stored compressed with nothing
  // saying so.
  unsupported_transfer_coding: 501,

  // Runtime secret rotation (docs/api.md "Runtime secrets"; docs/secrets.md).
  secret_pool_not_found: 404,
  secret_not_runtime: 400,
  secret_management_unavailable: 503,
  secret_value_empty: 400,
  secret_invalid_window: 400,
  secret_pool_full: 413,
  secret_duplicate_id: 409,
  secret_id_not_found: 404,
  secret_seal_failure: 500,
  secret_persist_failure: 500,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * Where an error is answered. The catalogue status applies everywhere except where a surface
 * overrides it below.
 */
export type ErrorSurface = "api" | "ingress";

// queue_full is 429 on publish (docs/api.md "Admin API") but 503 on ingress
// (docs/decisions.md D16: senders such as GitHub retry 5xx, not 429).
export const SURFACE_STATUS_OVERRIDES: Readonly<Record<ErrorSurface, Partial<Record<ErrorCode, number>>>> = {
  api: {},
  ingress: { queue_full: 503 },
};

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_STATUS, code);
}

export function statusForCode(code: ErrorCode, surface: ErrorSurface = "api"): number {
  return SURFACE_STATUS_OVERRIDES[surface][code] ?? ERROR_STATUS[code];
}

export interface ApiErrorExtras {
  /** 0-based index of the offending item in a batch request (Admin API publish, by-ID bodies). */
  itemIndex?: number;
  /** Response headers such as `Retry-After` or `Allow`. */
  headers?: Readonly<Record<string, string>>;
  /** Answer with the surface's status (ingress turns queue_full into 503). */
  surface?: ErrorSurface;
  /** Extra body fields after code/detail, e.g. `acked` and `conflicts` of a batch lease_conflict. */
  fields?: Readonly<Record<string, unknown>>;
  /**
   * The connection must not be reused: the request body was left unread (a body over the limit),
   * so the rest of it must not be parsed as the next request.
   */
  closeConnection?: boolean;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  readonly status: number;
  readonly itemIndex: number | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly closeConnection: boolean;

  constructor(code: ErrorCode, detail: string, extras: ApiErrorExtras = {}) {
    super(`${code}: ${detail}`);
    this.name = "ApiError";
    this.code = code;
    this.detail = detail;
    this.status = statusForCode(code, extras.surface);
    this.itemIndex = extras.itemIndex;
    this.headers = extras.headers ?? {};
    this.fields = extras.fields ?? {};
    this.closeConnection = extras.closeConnection ?? false;
  }

  /** The JSON body every surface answers with: `{code, detail, item_index?, ...fields}`. */
  toBody(): Record<string, unknown> {
    const body: Record<string, unknown> = { code: this.code, detail: this.detail };
    if (this.itemIndex !== undefined) body.item_index = this.itemIndex;
    for (const [name, value] of Object.entries(this.fields)) {
      if (!(name in body)) body[name] = value;
    }
    return body;
  }
}

export function apiError(code: ErrorCode, detail: string, extras?: ApiErrorExtras): ApiError {
  return new ApiError(code, detail, extras);
}

/** A request path as an error detail shows it: at most 200 characters (a 70 KB path is not echoed whole). */
export function shortPath(path: string): string {
  return path.length > 200 ? `${path.slice(0, 200)}…` : path;
}

/** `Retry-After` in whole seconds, at least 1 (a 0 would invite an immediate retry storm). */
export function retryAfterHeader(seconds: number): Record<string, string> {
  return { "Retry-After": String(Math.max(1, Math.ceil(seconds))) };
}

/**
 * Any thrown value as an ApiError. Unknown failures become 500 internal_error with a generic
 * detail: the original message may hold SQL, paths or secrets and is for the runtime log only.
 */
export function toApiError(thrown: unknown): ApiError {
  if (thrown instanceof ApiError) return thrown;
  return new ApiError("internal_error", "internal error");
}

/** The APIs that answer store failures; each keeps the code and detail its clients have always seen. */
export type StoreApi = "admin" | "ingress" | "pull";

/** The detail of every "the store failed" answer: the database's own message is for the runtime log only. */
const STORE_UNAVAILABLE_DETAIL = "the queue store is unavailable";

interface StoreAnswers {
  /** Store refusals a client can act on, by StoreError code; any other failure is `unavailable`. */
  refusals: Partial<Record<StoreErrorCode, (error: StoreError) => ApiError>>;
  unavailable: () => ApiError;
}

const itemOf = (error: StoreError): ApiErrorExtras => (error.itemIndex === undefined ? {} : { itemIndex: error.itemIndex });
const ingressRetry = (): ApiErrorExtras => ({ surface: "ingress", headers: retryAfterHeader(5) });

const STORE_ANSWERS: Readonly<Record<StoreApi, StoreAnswers>> = {
  // Publish and the by-ID operations: the refusal names the offending item.
  admin: {
    refusals: {
      duplicate_id: (error) => apiError("duplicate_id", error.message, itemOf(error)),
      queue_full: (error) => apiError("queue_full", error.message),
      memory_pressure: () => apiError("memory_pressure", "the memory store is at its retained-bytes limit"),
      invalid_argument: (error) => apiError("invalid_body", error.message, itemOf(error)),
    },
    unavailable: () => apiError("store_unavailable", STORE_UNAVAILABLE_DETAIL),
  },
  // Webhook senders retry a 503 after Retry-After; queue_full is 503 here (SURFACE_STATUS_OVERRIDES).
  ingress: {
    refusals: {
      queue_full: (error) => apiError("queue_full", error.message, ingressRetry()),
      memory_pressure: () => apiError("memory_pressure", "the in-memory queue is at its retained-size limit", ingressRetry()),
    },
    unavailable: () => apiError("store_unavailable", STORE_UNAVAILABLE_DETAIL, ingressRetry()),
  },
  // Workers poll: every store failure is queue_overload, to be retried after a second.
  pull: {
    refusals: {},
    unavailable: () => apiError("queue_overload", STORE_UNAVAILABLE_DETAIL, { headers: retryAfterHeader(1) }),
  },
};

/** A failed store call as `api` answers it; a failure that is not a StoreError is `unavailable`. */
/** A store failure as `api` answers it; any other error as it is (an ApiError, or an internal error). */
export function answerStoreError(thrown: unknown, api: StoreApi): unknown {
  return thrown instanceof StoreError ? storeApiError(thrown, api) : thrown;
}

export function storeApiError(thrown: unknown, api: StoreApi): ApiError {
  const answers = STORE_ANSWERS[api];
  const refusal = thrown instanceof StoreError ? answers.refusals[thrown.code] : undefined;
  return refusal ? refusal(thrown as StoreError) : answers.unavailable();
}
