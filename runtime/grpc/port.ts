// What the gRPC worker service needs of the Pull API, in the Pull API's own terms. The operations
// themselves live in runtime/pull/ (ops.ts, access.ts); runtime/app/grpc.ts hands them over, and
// the compiler checks there that they fit these shapes. A feature never imports another, so the
// binding names what it calls here instead of importing it.
import type { LeasedMessage } from "../store/records.js";

/** A dequeue as the client asked for it; absent fields take the `pull_api` defaults. */
export interface WorkerDequeue {
  batch?: number;
  leaseTtlMs?: number;
  maxWaitMs?: number;
}

/** One lease (`lease_id`) or several (`lease_ids`): the Pull API refuses both or neither. */
export interface WorkerLeases {
  lease_id?: string;
  lease_ids?: string[];
}

export interface WorkerNack extends WorkerLeases {
  delayMs?: number;
  dead?: boolean;
  reason?: string;
}

export interface WorkerExtend extends WorkerLeases {
  leaseTtlMs?: number;
}

/** A single lease settled (204) or a batch with its count (`acked` or `succeeded`). */
export type WorkerReply = { status: 204 } | { status: 200; body: Record<string, number> };

/**
 * The Pull API behind the worker service. Refusals are thrown as ApiErrors (runtime/errors.ts);
 * a batch with conflicts is a `lease_conflict` carrying the count and the `conflicts` list.
 */
export interface WorkerPull<Caller> {
  /** The bearer token (undefined: none; null: not a bearer token): a caller, or 401 unauthorized. */
  authenticate(token: string | undefined | null): Caller;
  /**
   * The route path of `endpoint` for this caller: 404 not_found for no pull route there, 403
   * forbidden for a token not allowed on it, 429 rate_limited for an empty bucket. `onRoute` is
   * told the route as soon as the endpoint is known (a dequeue refused 403 or 429 is still counted).
   */
  admit(caller: Caller, endpoint: string, onRoute?: (route: string) => void): string;
  dequeue(route: string, request: WorkerDequeue, openWait?: () => AbortSignal): Promise<LeasedMessage[]>;
  /** Returns messages leased for a caller that went away to the queue at once; never rejects. */
  release(route: string, leased: readonly LeasedMessage[]): Promise<void>;
  ack(route: string, request: WorkerLeases): Promise<WorkerReply>;
  nack(route: string, request: WorkerNack): Promise<WorkerReply>;
  extend(route: string, request: WorkerExtend): Promise<WorkerReply>;
}
