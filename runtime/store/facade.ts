// Every backend's Store is built here, from one table of the calls: a backend supplies its
// operations (StoreOps: the calls without any envelope) and its envelope (observed, refused after
// close, its own errors mapped to StoreError), and buildStore() gives each call its operation name
// (the spool_store_operation_* label and the context of a mapped error), the checks every backend
// shares, and the long poll. Adding a Store call: add it to the contract, to OPERATIONS, and to each
// backend's ops.
import type { Clock } from "../time/clock.js";
import { longPoll, type ReadySignal } from "./ready-signal.js";
import type { DequeueRequest, LeasedMessage, LifecycleOp } from "./records.js";
import type { Store, StoreBackend } from "./store.js";
import { validateDequeue, validateEnqueueBatch, validateLeaseTtl, validateLimit } from "./validate.js";

/** The Store calls that run in the backend's envelope (dequeue also waits between attempts). */
type Operation = Exclude<keyof Store, "backend" | "onReady" | "close">;

/** A backend's side of each call: its result or a promise of it; buildStore() adds the envelope. */
export type StoreOps = {
  readonly [K in Operation]: (...args: Parameters<Store[K]>) => Awaited<ReturnType<Store[K]>> | ReturnType<Store[K]>;
};

export interface Backend {
  readonly backend: StoreBackend;
  readonly ops: StoreOps;
  readonly ready: ReadySignal;
  readonly clock: Clock;
  /** Runs one call: observed under `operation`, refused once closed, the backend's errors as StoreError. */
  run<T>(operation: string, work: () => T | Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// Up to three arguments (the widest call has three): forwarded as they are, with no rest array.
type Args = [a?: any, b?: any, c?: any];

interface OperationSpec {
  /** The operation name, or how the call's first argument names it (lifecycle calls: by op). */
  name: string | ((first: any) => string);
  /** Checks every backend shares, inside the envelope and before the backend's work. */
  check?: (...args: Args) => void;
}

const OPERATIONS: { readonly [K in Operation]: OperationSpec } = {
  enqueue: { name: "enqueue", check: (items) => validateEnqueueBatch(items) },
  dequeue: { name: "dequeue" },
  ack: { name: "ack" },
  nack: { name: "nack" },
  extend: { name: "extend", check: (_leaseIds, leaseTtlMs) => validateLeaseTtl(leaseTtlMs) },
  recordAttempts: { name: "record_attempts" },
  listAttempts: { name: "list_attempts", check: (filter) => validateLimit(filter.limit) },
  listMessages: { name: "list_messages", check: (filter) => validateLimit(filter.limit) },
  getMessages: { name: "get_messages" },
  changeByIds: { name: (op: LifecycleOp) => op },
  changeByFilter: { name: (op: LifecycleOp) => `${op}_by_filter`, check: (_op, filter) => validateLimit(filter.limit) },
  deleteDead: { name: "dlq_delete" },
  queueStats: { name: "queue_stats" },
  topQueued: { name: "backlog_top_queued", check: (_selector, limit) => validateLimit(limit) },
  oldestQueued: { name: "backlog_oldest_queued", check: (_selector, limit) => validateLimit(limit) },
  agingSummary: { name: "backlog_aging_summary", check: (_selector, _states, limit) => validateLimit(limit) },
  captureTrendSample: { name: "capture_trend_sample" },
  trends: { name: "backlog_trends" },
  prune: { name: "prune" },
  listRuntimeSecrets: { name: "list_runtime_secrets" },
  addRuntimeSecret: { name: "add_runtime_secret" },
  deleteRuntimeSecret: { name: "delete_runtime_secret" },
  pruneRuntimeSecrets: { name: "prune_runtime_secrets" },
};

export function buildStore(backend: Backend): Store {
  const store: Record<string, unknown> = {
    backend: backend.backend,
    onReady: (listener: Parameters<Store["onReady"]>[0]) => backend.ready.subscribe(listener),
    close: () => backend.close(),
  };
  for (const operation of Object.keys(OPERATIONS) as Operation[]) {
    store[operation] = envelope(backend, OPERATIONS[operation], backend.ops[operation] as (...args: Args) => unknown);
  }
  const leaseOnce = store.dequeue as (request: DequeueRequest, signal?: AbortSignal) => Promise<LeasedMessage[]>;
  // A bad request is refused before any attempt (unobserved, as a rejection); a long poll repeats
  // the attempt whenever the route may have become ready, until its wait is over.
  store.dequeue = async (request: DequeueRequest, signal?: AbortSignal): Promise<LeasedMessage[]> => {
    validateDequeue(request);
    const attempt = () => leaseOnce(request, signal);
    if (!request.maxWaitMs) return attempt();
    return longPoll({ route: request.route, maxWaitMs: request.maxWaitMs, signal, clock: backend.clock, ready: backend.ready }, attempt);
  };
  return store as unknown as Store;
}

/** One call in the backend's envelope. The name and check are resolved once, not on every call. */
function envelope(backend: Backend, spec: OperationSpec, work: (...args: Args) => unknown): (...args: Args) => Promise<unknown> {
  const { name, check } = spec;
  if (typeof name !== "string") {
    return (a, b, c) =>
      backend.run(name(a), () => {
        check?.(a, b, c);
        return work(a, b, c);
      });
  }
  if (check) {
    return (a, b, c) =>
      backend.run(name, () => {
        check(a, b, c);
        return work(a, b, c);
      });
  }
  return (a, b, c) => backend.run(name, () => work(a, b, c));
}
