// Checks every backend applies before touching data, so a bad call fails the same way everywhere and
// changes nothing.
import { LIFECYCLE_FROM_STATES, type DequeueRequest, type LifecycleFilter, type LifecycleOp, type MessageState, type NewMessage } from "./records.js";
import { MAX_DEQUEUE_BATCH, MAX_ENQUEUE_BATCH, MAX_IDS_PER_CALL, MAX_LEASE_BATCH, MAX_LIST_LIMIT, StoreError } from "./store.js";

export function validateEnqueueBatch(items: readonly NewMessage[]): void {
  if (items.length > MAX_ENQUEUE_BATCH) {
    throw new StoreError("invalid_argument", `enqueue batch of ${items.length} exceeds ${MAX_ENQUEUE_BATCH} messages`);
  }
  // Every ingress request passes here with one message: no Set (nor closure) for a batch of one.
  const seen = items.length > 1 ? new Set<string>() : null;
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    if (typeof item.id !== "string" || item.id === "") throw new StoreError("invalid_argument", "message id is empty", index);
    if (typeof item.route !== "string" || !item.route.startsWith("/")) {
      throw new StoreError("invalid_argument", `message ${item.id}: route must start with "/"`, index);
    }
    if (typeof item.target !== "string" || item.target === "") throw new StoreError("invalid_argument", `message ${item.id}: target is empty`, index);
    if (!(item.payload instanceof Uint8Array)) throw new StoreError("invalid_argument", `message ${item.id}: payload must be bytes`, index);
    if (seen === null) continue;
    if (seen.has(item.id)) throw new StoreError("duplicate_id", `message id ${item.id} appears twice in the batch`, index);
    seen.add(item.id);
  }
}

export function validateDequeue(request: DequeueRequest): void {
  if (!Number.isInteger(request.batch) || request.batch < 1 || request.batch > MAX_DEQUEUE_BATCH) {
    throw new StoreError("invalid_argument", `dequeue batch must be 1..${MAX_DEQUEUE_BATCH}, got ${request.batch}`);
  }
  validateLeaseTtl(request.leaseTtlMs);
}

/** A lease's time to live, for dequeue and extend. */
export function validateLeaseTtl(leaseTtlMs: number): void {
  if (!(leaseTtlMs > 0)) throw new StoreError("invalid_argument", `lease ttl must be positive, got ${leaseTtlMs}`);
}

/** Deduplicates ids (keeping first occurrence) and enforces the per-call cap. */
export function uniqueIds(ids: readonly string[], what: "lease" | "message"): string[] {
  const cap = what === "lease" ? MAX_LEASE_BATCH : MAX_IDS_PER_CALL;
  const unique = [...new Set(ids.filter((id) => typeof id === "string" && id !== ""))];
  if (unique.length > cap) throw new StoreError("invalid_argument", `${unique.length} ${what} ids exceed the limit of ${cap}`);
  return unique;
}

export function validateLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new StoreError("invalid_argument", `limit must be 1..${MAX_LIST_LIMIT}, got ${limit}`);
  }
}

/** The states a lifecycle filter acts on: the op's source states, narrowed by filter.state. */
export function lifecycleStates(op: LifecycleOp, filter: Pick<LifecycleFilter, "state">): readonly MessageState[] {
  const allowed = LIFECYCLE_FROM_STATES[op];
  if (filter.state === undefined) return allowed;
  if (!allowed.includes(filter.state)) {
    throw new StoreError("invalid_argument", `${op} acts on ${allowed.join(", ")}, not ${filter.state}`);
  }
  return [filter.state];
}

/** The routes of a selector as a list, or undefined for "all routes". */
export function selectorRoutes(route: string | readonly string[] | undefined): readonly string[] | undefined {
  if (route === undefined) return undefined;
  return typeof route === "string" ? [route] : route;
}

/** Estimated bytes a message keeps alive: payload, header and trace text, and fixed bookkeeping. */
export function retainedBytesOf(item: Pick<NewMessage, "id" | "route" | "target" | "payload" | "headers" | "trace">): number {
  let bytes = 256 + item.payload.byteLength + item.id.length + item.route.length + item.target.length;
  for (const [name, value] of Object.entries(item.headers)) bytes += name.length + value.length;
  if (item.trace) for (const [name, value] of Object.entries(item.trace)) bytes += name.length + value.length;
  return bytes;
}
