// Ingress: route lookup → limits → verify → admission → store every fan-out copy → 202
// (docs/api.md "Ingress"; docs/decisions.md D12). Every refusal is a catalogue error counted by reason and status in
// spool_ingress_rejected_by_reason_total.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Clock } from "../clock.js";
import { ApiError, apiError, retryAfterHeader, shortPath, storeApiError } from "../errors.js";
import { awaitsContinue, ClientGoneError, readBody, headersSize } from "../http/body.js";
import { discardRequestBody } from "../http/discard.js";
import { sendError, sendJsonText } from "../http/respond.js";
import { abandonMessageIdStream, newMessageId } from "../ids.js";
import type { RuntimeLogger } from "../observability/log.js";
import { recordIngressRejection, type SpoolMetrics } from "../observability/metrics.js";
import type { RateLimitRegistry } from "../ratelimit/registry.js";
import type { NewMessage } from "../store/records.js";
import { StoreError, type Store } from "../store/store.js";
import type { BackpressureReason } from "./backpressure.js";
import { captureHeaders } from "./capture.js";
import { requestHost } from "./match.js";
import { GLOBAL_RATE_LIMIT_KEY, ingressRouteFor, type IngressRoute, type IngressState } from "./state.js";
import { authenticateByHeaders, authenticateIngress, ingressAuthError, type NonceCache, type ReplayToken } from "./verify/index.js";

export interface IngressDeps {
  /** The current compiled state; read once per request, so a reload never splits one request. */
  state(): IngressState;
  store: Store;
  clock: Clock;
  metrics: SpoolMetrics;
  nonces: NonceCache;
  rateLimits: RateLimitRegistry;
  /** The adaptive backpressure verdict from the cached queue stats (cheap, synchronous). */
  backpressure(): BackpressureReason | null;
  logger: RuntimeLogger;
}

/** A refusal with the reason label it is counted under. */
class IngressRefusal extends Error {
  constructor(
    readonly reason: string,
    readonly error: ApiError,
  ) {
    super(error.message);
  }
}

const refuse = (reason: string, error: ApiError) => new IngressRefusal(reason, error);

export function createIngressHandler(deps: IngressDeps) {
  const authOutageLoggedAtMs = new Map<string, number>();
  return async function handleIngress(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    try {
      const ids = await accept(req, res, path);
      deps.metrics.ingress.accepted.inc();
      deps.metrics.ingress.enqueued.inc(ids.length);
      sendJsonText(res, 202, queuedReply(ids));
    } catch (thrown) {
      // Nobody is left to answer, and nothing was refused.
      if (thrown instanceof ClientGoneError) return void res.destroy();
      let refusal =
        thrown instanceof IngressRefusal
          ? thrown
          : refuse("other", apiError("store_unavailable", "the message could not be stored", { surface: "ingress", headers: retryAfterHeader(5) }));
      if (!(thrown instanceof IngressRefusal)) deps.logger.error("ingress_failed", { path, error: thrown });
      recordIngressRejection(deps.metrics, refusal.reason, refusal.error.status);
      // Answered already: shutdown's deadline came while the body was still arriving (http/server.ts).
      if (res.headersSent) return;
      // A small unread body is read and dropped so the connection stays usable; a large or unknown
      // one gets the reply at once and a staged close (runtime/http/respond.ts).
      if (refusal.error.closeConnection && !req.complete && (await discardSmallBody(req))) {
        refusal = refuse(refusal.reason, withoutClose(refusal.error));
      }
      sendError(res, refusal.error);
    }
  };

  async function accept(req: IncomingMessage, res: ServerResponse, path: string): Promise<string[]> {
    const state = deps.state();
    const method = (req.method ?? "").toUpperCase();
    const url = req.url ?? "/";
    const question = url.indexOf("?");
    const lookup = state.routes.lookup(path, method, () => ({
      host: requestHost(req.headers.host),
      headers: req.headers,
      query: new URLSearchParams(question < 0 ? "" : url.slice(question + 1)),
      remoteAddress: req.socket.remoteAddress ?? "",
    }));
    if (lookup.kind === "not_found") throw refuse("not_found", apiError("not_found", `no route for ${shortPath(path)}`, { surface: "ingress", closeConnection: hasBody(req) }));
    if (lookup.kind === "method_not_allowed") {
      throw refuse(
        "method_not_allowed",
        apiError("method_not_allowed", `${method} is not accepted here`, { surface: "ingress", headers: { Allow: lookup.allow }, closeConnection: hasBody(req) }),
      );
    }
    const { route } = lookup.entry;

    if (headersSize(req) > route.maxHeadersBytes) {
      throw refuse(
        "headers_too_large",
        apiError("headers_too_large", `request headers exceed the route's limit of ${route.maxHeadersBytes} bytes`, { surface: "ingress", closeConnection: true }),
      );
    }
    const settings = state.byPath.get(route.path) ?? ingressRouteFor(route);
    // Credentials carried in headers (token, basic) are checked before the body is read: a client
    // without them is neither read nor invited to upload (Expect: 100-continue). Signatures and
    // forward auth need the body and are checked after it.
    const byHeaders = authenticateByHeaders(settings.auth, req.headers);
    if (byHeaders && !byHeaders.ok) throw refuse("auth", ingressAuthError(byHeaders, { closeConnection: hasBody(req) }));
    let body: Buffer;
    try {
      body = await readBody(req, { maxBytes: route.maxBodyBytes });
    } catch (error) {
      if (error instanceof ClientGoneError) throw error;
      // A body over the limit, or one the parser gave up on (bad_request, request_timeout).
      if (error instanceof ApiError) throw refuse(error.code, apiError(error.code, error.detail, { surface: "ingress", closeConnection: true }));
      throw refuse("bad_request", apiError("bad_request", "the request body could not be read", { surface: "ingress", closeConnection: true }));
    }

    const nowMs = deps.clock.now();
    // Only forward auth answers later; the other verifiers decide at once, without a wait.
    const pending = byHeaders ?? authenticateIngress(settings.auth, { method, path, headers: req.headers, body, nowMs });
    const verdict = pending instanceof Promise ? await pending : pending;
    if (!verdict.ok) {
      if (verdict.status === 503) reportAuthUnavailable(route.path, verdict.detail ?? "unavailable", nowMs);
      throw refuse("auth", ingressAuthError(verdict));
    }
    // Headers copied from a forward-auth answer are stored with the message, so they count against
    // max_headers too (docs/decisions.md D10).
    if (verdict.copiedHeaders && headersSize(req) + copiedSize(verdict.copiedHeaders) > route.maxHeadersBytes) {
      throw refuse(
        "headers_too_large",
        apiError("headers_too_large", `request headers with those copied by forward auth exceed the route's limit of ${route.maxHeadersBytes} bytes`, { surface: "ingress" }),
      );
    }

    // The nonce is claimed only now that the signature verified, so forged requests cannot burn it
    // (docs/decisions.md D14).
    const replayKeys = verdict.replay ? claimReplayKeys(route.path, verdict.replay) : [];
    try {
      admit(settings, state.hasGlobalRateLimit);
      const headers = captureHeaders(req, verdict.copiedHeaders, settings.reservedHeaders);
      const trace = { remote_addr: req.socket.remoteAddress ?? "", path };
      const copies = (): NewMessage[] => settings.targets.map((target) => ({ id: newMessageId(), route: route.path, target, payload: body, headers, trace }));
      // The server answered 503 shutting_down while this body was arriving: storing it now would keep
      // a message whose sender was told it was not taken (docs/decisions.md D44).
      if (res.headersSent) throw refuse("shutting_down", apiError("shutting_down", "the server is shutting down", { surface: "ingress" }));
      const ids = await storeCopies(copies, route.path);
      for (const key of replayKeys) deps.nonces.commit(key);
      return ids;
    } catch (error) {
      // Refused after verifying: the sender's identical retry must be accepted.
      for (const key of replayKeys) deps.nonces.release(key);
      throw error;
    }
  }

  /**
   * Stores every fan-out copy; returns their ids. A generated id can be taken already, by a message
   * published with an id chosen to match (publish takes its caller's ids): the sender is not refused
   * for that, the copies are made again with ids of a fresh stream (ids.ts).
   */
  async function storeCopies(copies: () => NewMessage[], routePath: string): Promise<string[]> {
    for (let attempt = 1; ; attempt++) {
      const messages = copies();
      try {
        await deps.store.enqueue(messages);
        return messages.map((m) => m.id);
      } catch (error) {
        if (!(error instanceof StoreError && error.code === "duplicate_id") || attempt === MAX_ID_ATTEMPTS) throw storeRefusal(error, routePath);
        abandonMessageIdStream();
      }
    }
  }

  /** An auth service outage is logged, at most once per route every AUTH_OUTAGE_LOG_INTERVAL_MS. */
  function reportAuthUnavailable(routePath: string, detail: string, nowMs: number): void {
    const last = authOutageLoggedAtMs.get(routePath);
    if (last !== undefined && nowMs - last < AUTH_OUTAGE_LOG_INTERVAL_MS && nowMs >= last) return;
    authOutageLoggedAtMs.set(routePath, nowMs);
    deps.logger.warn("ingress_auth_forward_unavailable", { route: routePath, detail });
  }

  /** Claims every replay key of the request, or none: one already used refuses it (ReplayToken). */
  function claimReplayKeys(routePath: string, replay: ReplayToken): string[] {
    const claimed: string[] = [];
    for (const key of replay.keys.map((k) => `${routePath}\n${k}`)) {
      if (deps.nonces.claim(key, replay.expiresAtMs) === "replayed") {
        for (const done of claimed) deps.nonces.release(done);
        const what = key.includes("\nmac:") ? "this signed request was already accepted" : "nonce already used";
        throw refuse("auth", apiError("unauthorized", `authentication failed: ${what}`, { surface: "ingress" }));
      }
      claimed.push(key);
    }
    return claimed;
  }

  function admit(settings: IngressRoute, hasGlobalLimit: boolean): void {
    // A route's own rate limit replaces the global one for that route (docs/spoolfile.md "Routes"):
    // one bucket decides, so a refusal never spends a token of another bucket.
    if (settings.rateLimitKey !== null) {
      const routeTake = deps.rateLimits.get(settings.rateLimitKey)?.take();
      if (routeTake && !routeTake.ok) throw rateLimited(routeTake.retryAfterSeconds, "route");
    } else if (hasGlobalLimit) {
      const globalTake = deps.rateLimits.get(GLOBAL_RATE_LIMIT_KEY)?.take();
      if (globalTake && !globalTake.ok) throw rateLimited(globalTake.retryAfterSeconds, "ingress");
    }
    const pressure = deps.backpressure();
    if (pressure) {
      deps.metrics.ingress.adaptiveBackpressure.inc({ reason: pressure });
      deps.metrics.ingress.adaptiveBackpressureApplied.inc();
      throw refuse(
        "adaptive_backpressure",
        apiError("adaptive_backpressure", `the queue is under pressure (${pressure}); retry later`, { surface: "ingress", headers: retryAfterHeader(5) }),
      );
    }
  }

  function rateLimited(retryAfterSeconds: number, scope: string): IngressRefusal {
    return refuse("rate_limit", apiError("rate_limited", `${scope} rate limit exceeded`, { surface: "ingress", headers: retryAfterHeader(retryAfterSeconds) }));
  }

  /** The refusal for a failed enqueue: full or memory-bound queues by name, anything else logged as store_unavailable. */
  function storeRefusal(error: unknown, routePath: string): IngressRefusal {
    const answer = storeApiError(error, "ingress");
    // A full queue and the memory guard are expected refusals; anything else is an outage to log.
    if (answer.code === "store_unavailable") deps.logger.error("ingress_store_failed", { route: routePath, error });
    return refuse(answer.code, answer);
  }
}

/**
 * The 202 body, `{"status":"queued","ids":[…]}`, written out rather than passed through
 * JSON.stringify on every request: generated ids (ids.ts) are `evt_` and hex, nothing to escape.
 */
function queuedReply(ids: readonly string[]): string {
  return `{"status":"queued","ids":["${ids.join('","')}"]}`;
}

const DISCARDABLE_BODY_BYTES = 64 * 1024;

/** How often an auth service outage is logged per route (every refusal is still counted in metrics). */
const AUTH_OUTAGE_LOG_INTERVAL_MS = 10_000;

/** Tries at storing a request's copies when generated ids turn out taken (a fresh stream each time). */
const MAX_ID_ATTEMPTS = 3;

/** A small declared body is drained before the reply, so the keep-alive connection stays usable. */
async function discardSmallBody(req: IncomingMessage): Promise<boolean> {
  // A client waiting for 100 Continue sends no body: there is nothing to drain, only to close.
  if (awaitsContinue(req)) return false;
  const length = req.headers["content-length"];
  if (length === undefined || !/^\d+$/.test(length) || Number(length) > DISCARDABLE_BODY_BYTES) return false;
  return (await discardRequestBody(req, { maxBytes: DISCARDABLE_BODY_BYTES, maxMs: 2_000 })).ended;
}

function withoutClose(error: ApiError): ApiError {
  return apiError(error.code, error.detail, { surface: "ingress", headers: error.headers, fields: error.fields });
}

// A refusal before the body was read leaves it on the wire; the connection must not be reused.
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}

/** Name and value bytes of the headers forward auth copies, counted as headersSize counts the request's. */
function copiedSize(copied: Readonly<Record<string, string>>): number {
  let total = 0;
  for (const name in copied) total += name.length + copied[name].length;
  return total;
}
