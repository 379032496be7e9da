import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ApiError, apiError, ERROR_STATUS, isErrorCode, retryAfterHeader, statusForCode, toApiError, type ErrorCode } from "../../runtime/errors.js";

// Transcribed from docs/api.md "Error catalogue" and docs/decisions.md D10–D17, D28–D30.
const PULL_TABLE: Record<string, number> = {
  invalid_body: 400,
  unauthorized: 401,
  forbidden: 403,
  lease_conflict: 409,
  rate_limited: 429,
  queue_overload: 503,
};
const ADMIN_TABLE: Record<string, number> = {
  invalid_body: 400,
  invalid_query: 400,
  unauthorized: 401,
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
  audit_reason_required: 400,
};
const INGRESS_TABLE: Record<string, number> = {
  bad_request: 400,
  unauthorized: 401,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  headers_too_large: 413,
  rate_limited: 429,
  queue_full: 503,
  adaptive_backpressure: 503,
  memory_pressure: 503,
  store_unavailable: 503,
};

const catalogue = suite("error catalogue");

catalogue("every Pull and Admin table code has the table's status", () => {
  for (const [code, status] of Object.entries({ ...PULL_TABLE, ...ADMIN_TABLE })) {
    assert.ok(isErrorCode(code), code);
    assert.is(statusForCode(code as ErrorCode), status, code);
  }
});

catalogue("every ingress code has its decided status on the ingress surface; queue_full is 503 there, 429 elsewhere", () => {
  for (const [code, status] of Object.entries(INGRESS_TABLE)) {
    assert.is(statusForCode(code as ErrorCode, "ingress"), status, code);
  }
  assert.is(apiError("queue_full", "full").status, 429);
  assert.is(apiError("queue_full", "full", { surface: "ingress" }).status, 503);
});

catalogue("every catalogue status is an error status and codes are snake_case", () => {
  for (const [code, status] of Object.entries(ERROR_STATUS)) {
    assert.match(code, /^[a-z][a-z0-9_]*$/);
    assert.ok(status >= 400 && status <= 599, code);
  }
  assert.not.ok(isErrorCode("toString"));
});

catalogue("the body is {code, detail, item_index?} plus declared fields, never overriding code or detail", () => {
  assert.equal(apiError("duplicate_id", "id a exists", { itemIndex: 0 }).toBody(), { code: "duplicate_id", detail: "id a exists", item_index: 0 });
  const conflict = apiError("lease_conflict", "1 of 2 leases invalid", {
    fields: { acked: 1, conflicts: [{ lease_id: "l2", reason: "lease_not_found" }], code: "sneaky" },
  });
  assert.equal(conflict.toBody(), { code: "lease_conflict", detail: "1 of 2 leases invalid", acked: 1, conflicts: [{ lease_id: "l2", reason: "lease_not_found" }] });
});

catalogue("unknown failures become a generic internal_error; ApiErrors pass through", () => {
  const original = apiError("rate_limited", "slow", { headers: retryAfterHeader(0.2) });
  assert.is(toApiError(original), original);
  assert.equal(original.headers, { "Retry-After": "1" });
  const wrapped = toApiError(new Error("password=hunter2"));
  assert.instance(wrapped, ApiError);
  assert.is(wrapped.status, 500);
  assert.equal(wrapped.toBody(), { code: "internal_error", detail: "internal error" });
});

catalogue.run();
