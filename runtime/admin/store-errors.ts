// StoreError → catalogue error for Admin answers. Whole-call store failures are 503
// store_unavailable: the message names the database problem, which is for the runtime log only.
import { apiError, type ApiError } from "../errors.js";
import { StoreError } from "../store/store.js";

export function storeErrorToApi(error: unknown): unknown {
  if (!(error instanceof StoreError)) return error;
  const at = error.itemIndex === undefined ? {} : { itemIndex: error.itemIndex };
  switch (error.code) {
    case "duplicate_id":
      return apiError("duplicate_id", error.message, at);
    case "queue_full":
      return apiError("queue_full", error.message);
    case "memory_pressure":
      return apiError("memory_pressure", "the memory store is at its retained-bytes limit");
    case "invalid_argument":
      return apiError("invalid_body", error.message, at);
    default:
      return apiError("store_unavailable", "the queue store is unavailable") satisfies ApiError;
  }
}
