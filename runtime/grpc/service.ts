// The gRPC binding of the Pull API: WorkerService's four RPCs (docs/grpc.md) over the same
// operations as the HTTP binding (runtime/pull/ops.ts, reached through the WorkerPull port). Each
// call runs auth first (metadata `authorization: Bearer <token>`), then the endpoint, the route's
// allowance and the rate limit, then the request's own fields; refusals answer with the status
// the error catalogue's code maps to (status.ts).
import { status, type handleUnaryCall, type Metadata, type ServerUnaryCall, type UntypedServiceImplementation } from "@grpc/grpc-js";
import { ApiError, apiError, toApiError } from "../errors.js";
import { extractBearerToken } from "../auth/token.js";
import { dequeueStatusLabel, type SpoolMetrics } from "../observability/metrics.js";
import { dequeueItemOf, durationMs, leaseConflictsOf, type DequeueItem, type Duration, type LeaseConflict } from "./messages.js";
import type { LeasedMessage } from "../store/records.js";
import type { WorkerDequeue, WorkerLeases, WorkerPull, WorkerReply } from "./port.js";
import { grpcError } from "./status.js";

interface DequeueRequest {
  endpoint: string;
  batch: number;
  max_wait: Duration | null;
  lease_ttl: Duration | null;
}

interface LeasesRequest {
  endpoint: string;
  lease_id: string;
  lease_ids: string[];
}

interface NackRequest extends LeasesRequest {
  delay: Duration | null;
  dead: boolean;
  reason: string;
}

interface ExtendRequest {
  endpoint: string;
  lease_id: string;
  extend_by: Duration | null;
}

export interface WorkerServiceDeps<Caller> {
  pull: WorkerPull<Caller>;
  metrics: SpoolMetrics;
  /** Aborted when Spool stops: open long polls answer at once with no items. */
  shutdownSignal: AbortSignal;
  /** A call failed for a reason that is no API error (answered INTERNAL); for the runtime log. */
  onUnexpectedError(rpc: string, error: unknown): void;
  /** Every call once answered, with its status code and the client's address (the access log). */
  onAnswered?(call: AnsweredCall): void;
}

export interface AnsweredCall {
  readonly rpc: string;
  readonly code: status;
  readonly durationMs: number;
  /** The client's address without its port. */
  readonly remote: string;
}

export function workerServiceHandlers<Caller>(deps: WorkerServiceDeps<Caller>): UntypedServiceImplementation {
  const { pull, metrics } = deps;

  /** Auth first, then the endpoint: the route path the call may use. */
  function admitted(call: ServerUnaryCall<{ endpoint: string }, unknown>, onRoute?: (route: string) => void): string {
    const caller = pull.authenticate(bearerToken(call.metadata));
    const endpoint = call.request.endpoint;
    if (endpoint === "") throw apiError("invalid_body", "endpoint is required: the route's pull path without the pull_api prefix, e.g. /github");
    return pull.admit(caller, endpoint, onRoute);
  }

  const Dequeue = unary<DequeueRequest, { items: DequeueItem[] }>("Dequeue", async (call) => {
    // Counted once per call on a known route by the answer it got, as the HTTP binding counts
    // (docs/operations.md "Metrics"); a call the client cancelled is not counted.
    let route: string | undefined;
    const count = (httpStatus: number) => {
      if (route !== undefined && !call.cancelled) metrics.pull.dequeue.inc({ route, status: dequeueStatusLabel(httpStatus) });
    };
    try {
      route = admitted(call, (known) => (route = known));
      const request = { batch: call.request.batch, leaseTtlMs: durationMs("lease_ttl", call.request.lease_ttl), maxWaitMs: durationMs("max_wait", call.request.max_wait) };
      const leased = await dequeueUnlessCancelled(call, route, request);
      count(200);
      return { items: leased.map(dequeueItemOf) };
    } catch (error) {
      count(toApiError(error).status);
      throw error;
    }
  });

  /**
   * The long poll ends when the client cancels (or its deadline passes) and at shutdown. Messages
   * leased for a call that was cancelled meanwhile go back to the queue at once: a cancelled
   * Dequeue leases nothing.
   */
  async function dequeueUnlessCancelled(call: ServerUnaryCall<DequeueRequest, unknown>, route: string, request: WorkerDequeue): Promise<LeasedMessage[]> {
    let stopWatching: (() => void) | undefined;
    const openWait = (): AbortSignal => {
      const cancelled = new AbortController();
      const onCancel = () => cancelled.abort();
      call.once("cancelled", onCancel);
      stopWatching = () => call.off("cancelled", onCancel);
      if (call.cancelled) cancelled.abort();
      return AbortSignal.any([cancelled.signal, deps.shutdownSignal]);
    };
    let leased: LeasedMessage[];
    try {
      leased = await pull.dequeue(route, request, openWait);
    } finally {
      stopWatching?.();
    }
    if (call.cancelled) {
      void pull.release(route, leased);
      return [];
    }
    return leased;
  }

  const Ack = unary<LeasesRequest, { acked: number; conflicts: LeaseConflict[] }>("Ack", async (call) => {
    const route = admitted(call);
    const { count, conflicts } = await settled(leasesOf(call.request), "acked", (leases) => pull.ack(route, leases));
    return { acked: count, conflicts };
  });

  const Nack = unary<NackRequest, { succeeded: number; conflicts: LeaseConflict[] }>("Nack", async (call) => {
    const route = admitted(call);
    const { dead, reason } = call.request;
    // The delay is ignored when the messages go to the DLQ; an empty reason is none.
    const how = dead ? { dead: true, reason: reason === "" ? undefined : reason } : { delayMs: durationMs("delay", call.request.delay) };
    const { count, conflicts } = await settled(leasesOf(call.request), "succeeded", (leases) => pull.nack(route, { ...leases, ...how }));
    return { succeeded: count, conflicts };
  });

  const Extend = unary<ExtendRequest, Record<string, never>>("Extend", async (call) => {
    const route = admitted(call);
    const leases = leasesOf({ lease_id: call.request.lease_id, lease_ids: [] });
    await pull.extend(route, { ...leases, leaseTtlMs: durationMs("extend_by", call.request.extend_by) });
    return {};
  });

  /** Runs an RPC; its failures answer with their status, unexpected ones logged first. */
  function unary<Request, Response>(rpc: string, run: (call: ServerUnaryCall<Request, Response>) => Promise<Response>): handleUnaryCall<Request, Response> {
    return (call, callback) => {
      const startedMs = performance.now();
      const answered = (code: status) =>
        deps.onAnswered?.({ rpc, code: call.cancelled ? status.CANCELLED : code, durationMs: performance.now() - startedMs, remote: peerAddress(call.getPeer()) });
      run(call).then(
        (response) => {
          callback(null, response);
          answered(status.OK);
        },
        (error: unknown) => {
          if (!(error instanceof ApiError)) deps.onUnexpectedError(rpc, error);
          const failure = grpcError(error);
          callback(failure);
          answered(failure.code!);
        },
      );
    };
  }

  return { Dequeue, Ack, Nack, Extend } as UntypedServiceImplementation;
}

/** The bearer token of the `authorization` metadata (the scheme case-insensitive), as the HTTP binding reads the header. */
function bearerToken(metadata: Metadata): string | undefined | null {
  const values = metadata.get("authorization");
  if (values.length === 0) return undefined;
  return extractBearerToken({ authorization: values.map(String).join(", ") });
}

/** "127.0.0.1:5000" or "[::1]:5000" → the address alone. */
function peerAddress(peer: string): string {
  const colon = peer.lastIndexOf(":");
  const host = colon < 0 ? peer : peer.slice(0, colon);
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/** proto3 strings and lists have no presence: empty means not sent. */
function leasesOf(request: { lease_id: string; lease_ids: string[] }): WorkerLeases {
  return {
    lease_id: request.lease_id === "" ? undefined : request.lease_id,
    lease_ids: request.lease_ids.length === 0 ? undefined : request.lease_ids,
  };
}

/**
 * A settlement's count: 1 for a single lease, the batch's count otherwise. A batch with conflicts
 * answers OK listing them (with what did settle counted); a single lease's conflict stays an error
 * (FAILED_PRECONDITION).
 */
async function settled(leases: WorkerLeases, countField: "acked" | "succeeded", run: (leases: WorkerLeases) => Promise<WorkerReply>): Promise<{ count: number; conflicts: LeaseConflict[] }> {
  try {
    const reply = await run(leases);
    return { count: reply.status === 204 ? 1 : reply.body[countField], conflicts: [] };
  } catch (error) {
    if (error instanceof ApiError && error.code === "lease_conflict" && leases.lease_id === undefined) {
      return { count: Number(error.fields[countField] ?? 0), conflicts: leaseConflictsOf(error.fields) };
    }
    throw error;
  }
}
