// The HTTP binding of the Pull API: POST {prefix}{pull.path}/dequeue|ack|nack|extend, and the SSE
// stream GET {prefix}{pull.path}/stream (stream.ts). Checks run method, then auth, then route, then op
// (docs/api.md "Pull API"); bodies are strict JSON (unknown fields and trailing documents are 400
// invalid_body), the stream's query is checked before the rate limit takes its one token.
import type { IncomingMessage, ServerResponse } from "node:http";
import { apiError, shortPath } from "../errors.js";
import { readBody } from "../http/body.js";
import { parseStrictJson, type BodySchema } from "../http/json.js";
import { sendEmpty, sendJson, sendJsonText } from "../http/respond.js";
import { extractBearerToken } from "../auth/token.js";
import { dequeueStatusLabel, type SpoolMetrics } from "../observability/metrics.js";
import type { RateLimitRegistry } from "../ratelimit/registry.js";
import type { LeasedMessage } from "../store/records.js";
import type { Clock } from "../time/clock.js";
import { setRequestRoute } from "../tracing/tracing.js";
import { authenticate, authorize, routeAt, takeRateLimit } from "./access.js";
import { encodeDequeueReply } from "./encode.js";
import type { LeaseReply, PullDequeueRequest, PullOps } from "./ops.js";
import type { PullRoute, PullState } from "./state.js";
import { parseStreamQuery, serveStream, STREAM_OP } from "./stream.js";

/** Pull bodies are small JSON documents (docs/api.md "Pull API": at most 1 MiB). */
export const MAX_PULL_BODY_BYTES = 1024 * 1024;

const DEQUEUE_BODY = { batch: { type: "integer" }, lease_ttl: { type: "duration" }, max_wait: { type: "duration" } } as const satisfies BodySchema;
const ACK_BODY = { lease_id: { type: "string" }, lease_ids: { type: "string[]" } } as const satisfies BodySchema;
const NACK_BODY = { ...ACK_BODY, delay: { type: "duration" }, dead: { type: "boolean" }, reason: { type: "string" } } as const satisfies BodySchema;
// `extend_by` is the reference implementation's name for the same field.
const EXTEND_BODY = { ...ACK_BODY, lease_ttl: { type: "duration" }, extend_by: { type: "duration" } } as const satisfies BodySchema;

const OPS = new Set(["dequeue", "ack", "nack", "extend"]);

export interface PullHttpDeps {
  state(): PullState;
  ops: PullOps;
  /** `pull_api { rate_limit }` buckets keyed by bearer token (see pullRateLimits); no bucket, no limit. */
  rateLimits: RateLimitRegistry;
  metrics: SpoolMetrics;
  clock: Clock;
  /** Aborted when the service shuts down: open long polls answer at once with empty items, streams end. */
  shutdownSignal: AbortSignal;
}

export function createPullHandler(deps: PullHttpDeps) {
  return async function handlePull(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const state = deps.state();
    const slash = path.lastIndexOf("/");
    const endpoint = slash <= 0 ? "" : path.slice(0, slash);
    const op = path.slice(slash + 1);
    if (op === STREAM_OP ? req.method !== "GET" : req.method !== "POST") {
      const allow = op === STREAM_OP ? "GET" : "POST";
      throw apiError("method_not_allowed", `${op === STREAM_OP ? "the stream" : "the Pull API"} takes ${allow}`, { headers: { Allow: allow }, closeConnection: true });
    }
    const caller = authenticate(state, extractBearerToken(req.headers));
    const pullRoute = routeAt(state, endpoint, shortPath(endpoint || path));
    // Every dequeue on a known route is counted once, by the status its answer went out with; one
    // the client abandoned before any answer (closed, never finished) is not counted.
    if (op === "dequeue") {
      const route = pullRoute.route.path;
      res.once("finish", () => deps.metrics.pull.dequeue.inc({ route, status: dequeueStatusLabel(res.statusCode) }));
    }
    authorize(caller, pullRoute);
    if (op === STREAM_OP) {
      setRequestRoute(req, `${endpoint}/${op}`);
      const request = parseStreamQuery(req.url);
      takeRateLimit(deps.rateLimits, caller);
      return serveStream(deps, req, res, pullRoute.route.path, request, state.stream);
    }
    if (!OPS.has(op)) throw apiError("not_found", `unknown Pull API operation ${JSON.stringify(shortPath(op))}`, { closeConnection: true });
    setRequestRoute(req, `${endpoint}/${op}`);

    // Read first (bodies are small), so a refused request leaves the keep-alive connection usable.
    const body = await readBody(req, { maxBytes: MAX_PULL_BODY_BYTES });
    takeRateLimit(deps.rateLimits, caller);
    if (op === "dequeue") await dequeue(req, res, pullRoute, body);
    else sendReply(res, await settle(op, pullRoute, body));
  };

  async function dequeue(req: IncomingMessage, res: ServerResponse, pullRoute: PullRoute, body: Buffer): Promise<void> {
    const parsed = parseStrictJson(body, DEQUEUE_BODY, { allowEmpty: true });
    const request: PullDequeueRequest = { batch: parsed.batch, leaseTtlMs: parsed.lease_ttl, maxWaitMs: parsed.max_wait };
    const route = pullRoute.route.path;
    // The ops decide whether the request waits; a long poll asks for the signal that ends it: the
    // client going away ends it with nothing leased, as does shutdown.
    let stopWatching: (() => void) | undefined;
    const openWait = (): AbortSignal => {
      const clientGone = new AbortController();
      const onClose = () => {
        if (!res.writableFinished) clientGone.abort();
      };
      res.once("close", onClose);
      req.socket.once("close", onClose);
      stopWatching = () => {
        res.off("close", onClose);
        req.socket.off("close", onClose);
      };
      return AbortSignal.any([clientGone.signal, deps.shutdownSignal]);
    };
    try {
      answerOrRelease(req, res, route, await deps.ops.dequeue(route, request, openWait));
    } finally {
      stopWatching?.();
    }
  }

  /**
   * Writes the leased messages, or, when the client is already gone (its connection closed while the
   * lease was being taken), returns them to the queue: nobody could ack them, and they would wait
   * for their lease to run out.
   */
  function answerOrRelease(req: IncomingMessage, res: ServerResponse, route: string, leased: LeasedMessage[]): void {
    if (leased.length > 0 && (req.socket.destroyed || res.destroyed)) {
      void deps.ops.release(route, leased);
      return;
    }
    sendJsonText(res, 200, encodeDequeueReply(leased));
  }

  function settle(op: string, pullRoute: PullRoute, body: Buffer): Promise<LeaseReply> {
    const route = pullRoute.route.path;
    switch (op) {
      case "ack":
        return deps.ops.ack(route, parseStrictJson(body, ACK_BODY));
      case "nack": {
        const request = parseStrictJson(body, NACK_BODY);
        return deps.ops.nack(route, { lease_id: request.lease_id, lease_ids: request.lease_ids, delayMs: request.delay, dead: request.dead, reason: request.reason });
      }
      default: {
        const request = parseStrictJson(body, EXTEND_BODY);
        if (request.lease_ttl !== undefined && request.extend_by !== undefined) {
          throw apiError("invalid_body", "use lease_ttl or extend_by, not both");
        }
        return deps.ops.extend(route, { lease_id: request.lease_id, lease_ids: request.lease_ids, leaseTtlMs: request.lease_ttl ?? request.extend_by });
      }
    }
  }
}

function sendReply(res: ServerResponse, reply: LeaseReply): void {
  if (reply.status === 204) sendEmpty(res, 204);
  else sendJson(res, 200, reply.body);
}
