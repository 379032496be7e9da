// The Pull API operations as transport-neutral functions (docs/api.md "Pull API",
// docs/decisions.md D18–D24): typed requests in, a reply or an ApiError out.
// Leases are scoped to the route the request addressed: another route's lease is lease_not_found.
import type { PullApiConfig } from "../../compiler/ir.js";
import type { Clock } from "../time/clock.js";
import { apiError, storeApiError, type ApiError } from "../errors.js";
import { recordDead, type SpoolMetrics } from "../observability/metrics.js";
import type { DequeueRequest as StoreDequeueRequest, LeasedMessage, LeaseOutcome } from "../store/records.js";
import { MAX_DEQUEUE_BATCH, type Store } from "../store/store.js";

/** The Pull API limits of the IR, as compiled (docs/spoolfile.md `pull_api`). */
export type PullLimits = Pick<PullApiConfig, "maxBatch" | "maxLeaseBatch" | "defaultLeaseTtlMs" | "maxLeaseTtlMs" | "defaultMaxWaitMs" | "maxWaitMs">;

/** A Pull API dequeue as the client asked for it: the store's request (runtime/store/records.ts) before the `pull_api` defaults and caps fill it. */
export type PullDequeueRequest = Partial<Pick<StoreDequeueRequest, "batch" | "leaseTtlMs" | "maxWaitMs">>;

/** One turn of a stream: what a dequeue takes but its wait, which the stream decides (streamTurn). */
export type PullStreamRequest = Pick<PullDequeueRequest, "batch" | "leaseTtlMs">;

export interface LeaseIdsRequest {
  lease_id?: string;
  lease_ids?: string[];
}

export interface NackRequest extends LeaseIdsRequest {
  delayMs?: number;
  dead?: boolean;
  reason?: string;
}

export interface ExtendRequest extends LeaseIdsRequest {
  leaseTtlMs?: number;
}

export interface DequeuedItem {
  id: string;
  lease_id: string;
  route: string;
  target: string;
  payload_b64: string;
  headers: Readonly<Record<string, string>>;
  /** The trace context stored at ingress (`remote_addr`, `path`, and `traceparent`/`tracestate` when tracing ran); absent when none was stored. */
  trace?: Readonly<Record<string, string>>;
  received_at: string;
  attempt: number;
  lease_until: string;
}

/** 204 for a single lease id, 200 with a count for a batch. */
export type LeaseReply = { status: 204 } | { status: 200; body: Record<string, number> };

export interface PullOpsDeps {
  store: Store;
  clock: Clock;
  metrics: SpoolMetrics;
  /** The current limits (a reload may change them). */
  limits(): PullLimits;
  /** A store call failed (answered 503 queue_overload); for the runtime log. */
  onStoreError(operation: string, error: unknown): void;
}

export interface PullOps {
  /**
   * Always resolves with the leased messages (possibly none; encode.ts writes them as DequeuedItems).
   * Whether the request waits for messages is decided here (dequeueWaitMs): only a dequeue that
   * waits calls `openWait`, once, for the signal whose abort ends the long poll with none leased;
   * one that cannot wait answers with what is ready, with no long-poll machinery.
   */
  dequeue(route: string, request: PullDequeueRequest, openWait?: () => AbortSignal): Promise<LeasedMessage[]>;
  /**
   * One turn of a stream (SSE): leases like a dequeue with the same batch and lease clamps, waiting up
   * to `waitMs` for a message through the same wake-up as a long poll. The wait is the stream's own
   * (the time left to its next keepalive), so `max_wait`, which bounds one request, does not cap it.
   * Aborting `signal` ends the wait with none leased.
   */
  streamTurn(route: string, request: PullStreamRequest, waitMs: number, signal: AbortSignal): Promise<LeasedMessage[]>;
  /**
   * Returns messages leased for a client that went away before their reply could be written (a long
   * poll closed the moment they arrived) to the queue at once, rather than when their lease runs
   * out. Not a worker's nack: not counted as one. Never rejects (a store failure is reported).
   */
  release(route: string, leased: readonly LeasedMessage[]): Promise<void>;
  ack(route: string, request: LeaseIdsRequest): Promise<LeaseReply>;
  nack(route: string, request: NackRequest): Promise<LeaseReply>;
  extend(route: string, request: ExtendRequest): Promise<LeaseReply>;
}

export function createPullOps(deps: PullOpsDeps): PullOps {
  const { store, metrics } = deps;

  return {
    dequeue(route, request, openWait) {
      const limits = deps.limits();
      const maxWaitMs = dequeueWaitMs(request, limits);
      return lease(route, request, limits, maxWaitMs, maxWaitMs > 0 ? openWait?.() : undefined);
    },

    streamTurn(route, request, waitMs, signal) {
      return lease(route, request, deps.limits(), Math.max(1, waitMs), signal);
    },

    async release(route, leased) {
      if (leased.length === 0) return;
      try {
        await store.nack(leased.map((m) => m.leaseId), { delayMs: 0 }, { route });
      } catch (error) {
        deps.onStoreError("release", error);
      }
    },

    async ack(route, request) {
      const { leaseIds, single } = leaseIdsOf(request, deps.limits().maxLeaseBatch);
      const outcome = await settle("ack", () => store.ack(leaseIds, { route }));
      metrics.pull.acked.inc({ route }, firstSettlements(outcome));
      countConflicts(route, outcome, metrics.pull.ackConflict);
      if (outcome.conflicts.length > 0) throw conflict(outcome, "acked");
      return single ? { status: 204 } : { status: 200, body: { acked: outcome.settled.length } };
    },

    async nack(route, request) {
      const { leaseIds, single } = leaseIdsOf(request, deps.limits().maxLeaseBatch);
      // dead: true ignores the delay and keeps the reason as dead_reason (docs/api.md "Pull API").
      const how = request.dead ? { dead: true as const, reason: request.reason ?? null } : { delayMs: Math.max(0, request.delayMs ?? 0) };
      const outcome = await settle("nack", () => store.nack(leaseIds, how, { route }));
      metrics.pull.nacked.inc({ route }, firstSettlements(outcome));
      // A worker's dead letter counts like a delivery's, under the nack reason (docs/api.md
      // "Admin API", health details: dead_by_reason; "unspecified" and "other" are the worker's labels).
      // A repeated nack of the same lease is answered as a success but counted once.
      if (request.dead) recordDead(metrics.delivery, request.reason, firstSettlements(outcome));
      countConflicts(route, outcome, metrics.pull.nackConflict);
      if (outcome.conflicts.length > 0) throw conflict(outcome, "succeeded");
      return single ? { status: 204 } : { status: 200, body: { succeeded: outcome.settled.length } };
    },

    async extend(route, request) {
      const limits = deps.limits();
      const { leaseIds } = leaseIdsOf(request, limits.maxLeaseBatch);
      // The lease then runs until now + lease_ttl, never shortened, capped by max_lease_ttl (docs/decisions.md D18).
      const leaseTtlMs = leaseTtlFor(request.leaseTtlMs, limits);
      const outcome = await settle("extend", () => store.extend(leaseIds, leaseTtlMs, { route }));
      countConflicts(route, outcome, undefined);
      if (outcome.conflicts.length > 0) throw conflict(outcome, "extended");
      return { status: 204 };
    },
  };

  /** A dequeue or a stream's turn: the request's batch and lease clamped by `limits`, waiting up to `maxWaitMs`. */
  async function lease(route: string, request: PullStreamRequest, limits: PullLimits, maxWaitMs: number, signal: AbortSignal | undefined): Promise<LeasedMessage[]> {
    const batch = clamp(request.batch === undefined || request.batch <= 0 ? 1 : request.batch, Math.min(limits.maxBatch, MAX_DEQUEUE_BATCH));
    const leaseTtlMs = leaseTtlFor(request.leaseTtlMs, limits);
    try {
      return await store.dequeue({ route, batch, leaseTtlMs, maxWaitMs }, signal);
    } catch (error) {
      deps.onStoreError("dequeue", error);
      throw storeApiError(error, "pull");
    }
  }

  /** A store that cannot answer is 503 queue_overload on the Pull API (docs/api.md "Pull API"). */
  async function settle(operation: string, run: () => Promise<LeaseOutcome>): Promise<LeaseOutcome> {
    try {
      return await run();
    } catch (error) {
      deps.onStoreError(operation, error);
      throw storeApiError(error, "pull");
    }
  }

  function countConflicts(route: string, outcome: LeaseOutcome, counter: SpoolMetrics["pull"]["ackConflict"] | undefined): void {
    if (outcome.conflicts.length === 0) return;
    counter?.inc({ route }, outcome.conflicts.length);
    const expired = outcome.conflicts.filter((c) => c.reason === "lease_expired").length;
    if (expired > 0) metrics.pull.leaseExpired.inc({ route }, expired);
  }
}

/** lease_id or lease_ids (not both), deduplicated, empty ids skipped, at most `maxLeaseBatch`. */
export function leaseIdsOf(request: LeaseIdsRequest, maxLeaseBatch: number): { leaseIds: string[]; single: boolean } {
  if (request.lease_id !== undefined && request.lease_ids !== undefined) {
    throw apiError("invalid_body", "use lease_id or lease_ids, not both");
  }
  if (request.lease_id !== undefined) {
    if (request.lease_id === "") throw apiError("invalid_body", "lease_id must not be empty");
    return { leaseIds: [request.lease_id], single: true };
  }
  if (request.lease_ids === undefined) throw apiError("invalid_body", "lease_id or lease_ids is required");
  const leaseIds = [...new Set(request.lease_ids.filter((id) => id !== ""))];
  if (leaseIds.length === 0) throw apiError("invalid_body", "lease_ids holds no lease id");
  if (leaseIds.length > maxLeaseBatch) throw apiError("invalid_body", `lease_ids holds ${leaseIds.length} ids; at most ${maxLeaseBatch} per request`);
  return { leaseIds, single: false };
}

function conflict(outcome: LeaseOutcome, countField: "acked" | "succeeded" | "extended"): ApiError {
  const n = outcome.conflicts.length;
  return apiError("lease_conflict", `${n} lease${n === 1 ? " is" : "s are"} unknown or expired`, {
    fields: {
      [countField]: outcome.settled.length,
      conflicts: outcome.conflicts.map((c) => ({ lease_id: c.leaseId, reason: c.reason })),
    },
  });
}

/** How long a dequeue may wait for messages: the request's max_wait or the default, capped by max_wait. */
function dequeueWaitMs(request: PullDequeueRequest, limits: PullLimits): number {
  return capped(request.maxWaitMs ?? limits.defaultMaxWaitMs, limits.maxWaitMs);
}

/** A leased message as the Pull API shows it (encode.ts writes exactly JSON.stringify of these). */
export function toItem(message: LeasedMessage): DequeuedItem {
  return {
    id: message.id,
    lease_id: message.leaseId,
    route: message.route,
    target: message.target,
    payload_b64: Buffer.from(message.payload.buffer, message.payload.byteOffset, message.payload.byteLength).toString("base64"),
    // Serialised at once and never mutated: no copy needed.
    headers: message.headers,
    ...(message.trace ? { trace: message.trace } : {}),
    received_at: new Date(message.receivedAtMs).toISOString(),
    attempt: message.attempt,
    lease_until: new Date(message.leaseUntilMs).toISOString(),
  };
}

function clamp(value: number, max: number): number {
  return Math.max(1, Math.min(value, max));
}

/** A requested lease TTL (absent or ≤0: the default), capped by max_lease_ttl. */
function leaseTtlFor(requestedMs: number | undefined, limits: PullLimits): number {
  return capped(requestedMs !== undefined && requestedMs > 0 ? requestedMs : limits.defaultLeaseTtlMs, limits.maxLeaseTtlMs);
}

function capped(valueMs: number, capMs: number | null): number {
  return capMs === null ? valueMs : Math.min(valueMs, capMs);
}

/** Settlements this call made, leaving out idempotent repeats of earlier ones. */
function firstSettlements(outcome: LeaseOutcome): number {
  return outcome.settled.length - (outcome.repeated?.length ?? 0);
}
