// The SSE binding of the Pull API: GET {prefix}{pull.path}/stream (docs/workers.md "SSE",
// docs/decisions.md D110–D113). Each turn leases through ops.streamTurn, the dequeue operation with
// the long poll's wake-up, waiting at most until the next keepalive is due; every leased message is
// one `message` event whose data is the dequeue item. Leases are settled with the POST operations.
import type { IncomingMessage, ServerResponse } from "node:http";
import { parseDurationMs } from "../../compiler/index.js";
import { apiError, toApiError } from "../errors.js";
import type { SpoolMetrics } from "../observability/metrics.js";
import type { LeasedMessage } from "../store/records.js";
import type { Clock } from "../time/clock.js";
import { encodeItems } from "./encode.js";
import type { PullOps, PullStreamRequest } from "./ops.js";
import type { StreamSettings } from "./state.js";

export const STREAM_OP = "stream";

const KEEPALIVE = ": keepalive\n\n";

export interface StreamDeps {
  ops: PullOps;
  metrics: SpoolMetrics;
  clock: Clock;
  /** Aborted when the service shuts down: every stream ends at once. */
  shutdownSignal: AbortSignal;
}

/**
 * `?batch=N&lease_ttl=D`: batch an integer ≥ 1, lease_ttl a duration > 0 (the Spoolfile's grammar),
 * each at most once; anything else is 400 invalid_query. Other parameters are ignored.
 */
export function parseStreamQuery(url: string | undefined): PullStreamRequest {
  const query = new URLSearchParams((url ?? "").split("?")[1] ?? "");
  const request: { batch?: number; leaseTtlMs?: number } = {};
  const batch = single(query, "batch");
  if (batch !== undefined) {
    const value = /^[0-9]{1,9}$/.test(batch) ? Number(batch) : NaN;
    if (!(value >= 1)) throw apiError("invalid_query", `batch must be an integer of at least 1, got ${JSON.stringify(batch)}`);
    request.batch = value;
  }
  const leaseTtl = single(query, "lease_ttl");
  if (leaseTtl !== undefined) {
    const ms = parseDurationMs(leaseTtl);
    if (ms === undefined || !(ms > 0)) throw apiError("invalid_query", `lease_ttl must be a duration above zero such as "30s", got ${JSON.stringify(leaseTtl)}`);
    request.leaseTtlMs = ms;
  }
  return request;
}

function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw apiError("invalid_query", `${name} is given ${values.length} times`);
  return values[0];
}

/**
 * Serves one stream until the client closes it, the server shuts down, `sse_max_connection` runs
 * out or the store fails (an `error` event). Never rejects once the headers are out.
 */
export async function serveStream(deps: StreamDeps, req: IncomingMessage, res: ServerResponse, route: string, request: PullStreamRequest, settings: StreamSettings): Promise<void> {
  const { metrics, clock } = deps;
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no" });
  res.flushHeaders();
  metrics.pull.sseConnections.inc({ route });
  metrics.pull.sseConnectionActive.inc({ route });

  const clientGone = new AbortController();
  const onClose = () => clientGone.abort();
  res.once("close", onClose);
  req.socket.once("close", onClose);
  const lifetime = new AbortController();
  if (settings.maxConnectionMs !== null) clock.sleep(settings.maxConnectionMs, clientGone.signal).then(() => lifetime.abort(), () => {});
  const ended = AbortSignal.any([clientGone.signal, deps.shutdownSignal, lifetime.signal]);

  const gone = () => res.destroyed || req.socket.destroyed;
  let lastWriteMs = clock.now();
  try {
    while (!ended.aborted && !gone()) {
      const waitMs = settings.keepaliveMs - (clock.now() - lastWriteMs);
      if (waitMs <= 0) {
        lastWriteMs = clock.now();
        if (!res.write(KEEPALIVE)) await drained(res, ended);
        continue;
      }
      let leased: LeasedMessage[];
      try {
        leased = await deps.ops.streamTurn(route, request, waitMs, ended);
      } catch (error) {
        if (!gone()) res.write(`event: error\ndata: ${oneLine(toApiError(error).detail)}\n\n`);
        break;
      }
      if (leased.length === 0) continue;
      // Leased for a client that has gone: nobody can settle them, so they go back at once.
      if (gone()) {
        await deps.ops.release(route, leased);
        break;
      }
      lastWriteMs = clock.now();
      metrics.pull.sseMessagesSent.inc({ route }, leased.length);
      if (!res.write(events(leased))) await drained(res, ended);
    }
  } finally {
    res.off("close", onClose);
    req.socket.off("close", onClose);
    clientGone.abort(); // stops the lifetime timer
    metrics.pull.sseConnectionActive.dec({ route });
    if (!gone()) res.end();
  }
}

/** One `message` event per leased message: its lease id as the event id, the dequeue item as data. */
function events(leased: readonly LeasedMessage[]): string {
  let out = "";
  encodeItems(leased, (json, _index, message) => (out += `id: ${message.leaseId}\nevent: message\ndata: ${json}\n\n`));
  return out;
}

/** An SSE data line ends at a line break: the detail is written on one line. */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, " ");
}

/** Resolves when the response can take more, or the stream ends: a slow reader is not leased more. */
function drained(res: ServerResponse, ended: AbortSignal): Promise<void> {
  if (ended.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      ended.removeEventListener("abort", done);
      resolve();
    };
    res.once("drain", done);
    ended.addEventListener("abort", done, { once: true });
  });
}
