// Ingress: route lookup → limits → verify → admission → store every fan-out copy → 202
// (docs/api.md "Ingress"; docs/decisions.md D12). Every refusal is a catalogue error counted by reason and status in
// spool_ingress_rejected_by_reason_total. The steps live beside this file: refusal.ts (answering),
// admission.ts (rate limits, backpressure), replay.ts (nonces), enqueue.ts (storing, the 202).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Route } from "../../compiler/ir.js";
import type { Clock } from "../time/clock.js";
import { ApiError, apiError, shortPath } from "../errors.js";
import { ClientGoneError, readBody, headersSize } from "../http/body.js";
import { sendJsonText } from "../http/respond.js";
import { newMessageId } from "../store/ids.js";
import type { RuntimeLogger } from "../observability/log.js";
import { recordIngressRejection, type SpoolMetrics } from "../observability/metrics.js";
import type { RateLimitRegistry } from "../ratelimit/registry.js";
import type { NewMessage } from "../store/records.js";
import type { Store } from "../store/store.js";
import { requestTraceContext, setRequestRoute } from "../tracing/tracing.js";
import { admit } from "./admission.js";
import type { BackpressureReason } from "./backpressure.js";
import { captureHeaders } from "./capture.js";
import { queuedReply, storeCopies } from "./enqueue.js";
import { requestHost } from "./match.js";
import { answerRefusal, hasBody, IngressRefusal, refuse, unexpectedFailure } from "./refusal.js";
import { claimReplayKeys } from "./replay.js";
import { ingressRouteFor, type IngressRoute, type IngressState } from "./state.js";
import type { RuntimeSecretVersions } from "../secrets/pools.js";
import { authenticateByHeaders, authenticateIngress, ingressAuthError, withRuntimeVersions, type IngressAuthOutcome, type NonceCache } from "./verify/index.js";

export interface IngressDeps {
  /** The current compiled state; read once per request, so a reload never splits one request. */
  state(): IngressState;
  store: Store;
  clock: Clock;
  metrics: SpoolMetrics;
  nonces: NonceCache;
  /** The runtime secret pools' versions (docs/secrets.md), looked up per request. */
  runtimeSecrets?: RuntimeSecretVersions;
  rateLimits: RateLimitRegistry;
  /** The adaptive backpressure verdict from the cached queue stats (cheap, synchronous). */
  backpressure(): BackpressureReason | null;
  logger: RuntimeLogger;
}

type ReportAuthUnavailable = (routePath: string, detail: string, nowMs: number) => void;

export function createIngressHandler(deps: IngressDeps) {
  const reportAuthUnavailable = authOutageReporter(deps.logger);
  return async function handleIngress(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    try {
      const ids = await accept(deps, reportAuthUnavailable, req, res, path);
      deps.metrics.ingress.accepted.inc();
      deps.metrics.ingress.enqueued.inc(ids.length);
      sendJsonText(res, 202, queuedReply(ids));
    } catch (thrown) {
      // Nobody is left to answer, and nothing was refused.
      if (thrown instanceof ClientGoneError) return void res.destroy();
      const refusal = thrown instanceof IngressRefusal ? thrown : unexpectedFailure();
      if (!(thrown instanceof IngressRefusal)) deps.logger.error("ingress_failed", { path, error: thrown });
      recordIngressRejection(deps.metrics, refusal.reason, refusal.error.status);
      await answerRefusal(req, res, refusal);
    }
  };
}

/** The replay keys of a request whose verifier names none (most requests): shared, never written. */
const NO_REPLAY_KEYS: readonly string[] = [];

/** The steps from request to stored copies; each refusal is thrown as an IngressRefusal. */
async function accept(deps: IngressDeps, reportAuthUnavailable: ReportAuthUnavailable, req: IncomingMessage, res: ServerResponse, path: string): Promise<string[]> {
  const state = deps.state();
  const method = (req.method ?? "").toUpperCase();
  const route = lookupRoute(state, req, path, method);
  setRequestRoute(req, route.path, route.path);
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
    throw bodyRefusal(error);
  }

  const nowMs = deps.clock.now();
  // Only forward auth answers later; the other verifiers decide at once, without a wait.
  const pending = byHeaders ?? authenticateIngress(withRuntimeVersions(settings.auth, deps.runtimeSecrets, nowMs), { method, path, headers: req.headers, body, nowMs });
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
  const replayKeys = verdict.replay ? claimReplayKeys(deps.nonces, route.path, verdict.replay) : NO_REPLAY_KEYS;
  try {
    const copies = admitCopies(deps, req, res, path, route, settings, verdict, body, state.hasGlobalRateLimit);
    const ids = await storeCopies(deps, copies, route.path);
    for (const key of replayKeys) deps.nonces.commit(key);
    return ids;
  } catch (error) {
    // Refused after verifying: the sender's identical retry must be accepted.
    for (const key of replayKeys) deps.nonces.release(key);
    throw error;
  }
}

/** The route the request addresses, or the not_found / method_not_allowed refusal. */
function lookupRoute(state: IngressState, req: IncomingMessage, path: string, method: string): Route {
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
  return lookup.entry.route;
}

/** Why the body could not be read, as a refusal (a client gone stays what it is: nobody to answer). */
function bodyRefusal(error: unknown): unknown {
  if (error instanceof ClientGoneError) return error;
  // A body over the limit, or one the parser gave up on (bad_request, request_timeout).
  if (error instanceof ApiError) return refuse(error.code, apiError(error.code, error.detail, { surface: "ingress", closeConnection: true }));
  return refuse("bad_request", apiError("bad_request", "the request body could not be read", { surface: "ingress", closeConnection: true }));
}

/** Admits the request (rate limits, backpressure) and returns the maker of its fan-out copies. */
function admitCopies(
  deps: IngressDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  route: Route,
  settings: IngressRoute,
  verdict: Extract<IngressAuthOutcome, { ok: true }>,
  body: Buffer,
  hasGlobalRateLimit: boolean,
): () => NewMessage[] {
  admit(deps, settings, hasGlobalRateLimit);
  const headers = captureHeaders(req, verdict.copiedHeaders, settings.reservedHeaders);
  // With tracing on, the ingress span's traceparent (and tracestate) is stored too: the push attempt
  // continues that trace, and a pull worker can (docs/operations.md "Tracing").
  // Built without a spread of an absent context: one object shape for every untraced request.
  const traced = requestTraceContext(req);
  const remoteAddr = req.socket.remoteAddress ?? "";
  const trace = traced === undefined ? { remote_addr: remoteAddr, path } : { remote_addr: remoteAddr, path, ...traced };
  const copies = (): NewMessage[] => settings.targets.map((target) => ({ id: newMessageId(), route: route.path, target, payload: body, headers, trace }));
  // The server answered 503 shutting_down while this body was arriving: storing it now would keep
  // a message whose sender was told it was not taken (docs/decisions.md D44).
  if (res.headersSent) throw refuse("shutting_down", apiError("shutting_down", "the server is shutting down", { surface: "ingress" }));
  return copies;
}

/** How often an auth service outage is logged per route (every refusal is still counted in metrics). */
const AUTH_OUTAGE_LOG_INTERVAL_MS = 10_000;

/** An auth service outage is logged, at most once per route every AUTH_OUTAGE_LOG_INTERVAL_MS. */
function authOutageReporter(logger: RuntimeLogger): ReportAuthUnavailable {
  const loggedAtMs = new Map<string, number>();
  return (routePath, detail, nowMs) => {
    const last = loggedAtMs.get(routePath);
    if (last !== undefined && nowMs - last < AUTH_OUTAGE_LOG_INTERVAL_MS && nowMs >= last) return;
    loggedAtMs.set(routePath, nowMs);
    logger.warn("ingress_auth_forward_unavailable", { route: routePath, detail });
  };
}

/** Name and value bytes of the headers forward auth copies, counted as headersSize counts the request's. */
function copiedSize(copied: Readonly<Record<string, string>>): number {
  let total = 0;
  for (const name in copied) total += name.length + copied[name].length;
  return total;
}
