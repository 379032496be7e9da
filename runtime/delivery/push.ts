// One HTTP push delivery attempt (docs/decisions.md D35; docs/delivery.md "Push").
// Returns the attempt's outcome as a value; throws only when the caller's signal aborts (shutdown),
// in which case nothing is settled and the lease runs out on its own.
import { timerDelayMs } from "../time/clock.js";
import { EventEmitter } from "node:events";
import { request, type Dispatcher } from "undici";
import { resultForNetworkError, resultForPolicyDenial, resultForStatus, type AttemptResult } from "./classify.js";
import { checkEgressUrl, compileEgressPolicy, EgressDeniedError, isEgressDenied, type CompiledEgressPolicy, type EgressDecision, type EgressPolicy } from "./egress.js";
import { parseRetryAfter } from "../http/retry-after.js";
import { NoValidSecretError, type Signer } from "./sign.js";

export interface PushInput {
  readonly url: string;
  /** The exact stored body bytes. */
  readonly body: Buffer;
  /** The stored ingress headers (Content-Type included). */
  readonly headers: Readonly<Record<string, string>>;
  /** The target's `header` directives; they replace stored headers of the same name. */
  readonly extraHeaders?: Readonly<Record<string, string>>;
  /** The attempt's span's `traceparent` (and `tracestate`), replacing stored ones; sent on redirects too. */
  readonly traceHeaders?: Readonly<Record<string, string>>;
  readonly messageId: string;
  readonly attempt: number;
  readonly timeoutMs: number;
  readonly signer?: Signer;
  /** An egress Agent (createEgressAgent) so the connect-time policy applies. */
  readonly dispatcher: Dispatcher;
  /** URL-level policy and redirect handling: the IR's `defaults.egress`, as compiled (docs/delivery.md). */
  readonly egress: EgressPolicy | CompiledEgressPolicy;
  /** Signing time; the dispatcher passes its clock's now(). */
  readonly nowMs?: number;
  readonly signal?: AbortSignal;
  /** At most this much of a response body is read before the connection is dropped. */
  readonly maxResponseBytes?: number;
}

export type PushResult = AttemptResult & { readonly redirects?: number };

/**
 * Headers that describe one hop or one framing, not the message: forwarding them would be wrong
 * (a stale Content-Length corrupts framing, Host would misroute) or is refused by undici.
 */
const hopByHopHeaders = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "host",
  "content-length",
  "expect",
]);

const redirectStatuses = new Set([301, 302, 303, 307, 308]);
const maxRedirects = 5;
const defaultMaxResponseBytes = 64 * 1024;

/**
 * One attempt's abort, by its timeout or by the caller's signal. undici takes an EventEmitter as a
 * request signal; creating one costs a fraction of an AbortController, which showed up as the
 * largest single overhead of the dispatcher over a plain request loop in the push benchmark.
 */
class AttemptAbort extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  timedOut = false;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit("abort");
  }
}

export async function deliverHttp(input: PushInput): Promise<PushResult> {
  const policy = toCompiled(input.egress);
  const nowMs = input.nowMs ?? Date.now();
  const abort = new AttemptAbort();
  const timer = setTimeout(() => {
    abort.timedOut = true;
    abort.abort(new DOMException(`timeout after ${input.timeoutMs} ms`, "TimeoutError"));
  }, timerDelayMs(input.timeoutMs));
  const onAbort = () => abort.abort(input.signal!.reason);
  input.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await attemptWithRedirects(input, policy, nowMs, abort);
  } finally {
    clearTimeout(timer);
    input.signal?.removeEventListener("abort", onAbort);
  }
}

async function attemptWithRedirects(input: PushInput, policy: CompiledEgressPolicy, nowMs: number, abort: AttemptAbort): Promise<PushResult> {
  if (input.signal?.aborted) throw abortError(input.signal);
  let url = input.url;
  const origin = new URL(input.url).origin;
  for (let redirects = 0; ; redirects++) {
    const urlDecision = cachedUrlDecision(policy, url);
    if (!urlDecision.allowed) return withRedirects(resultForPolicyDenial(new EgressDeniedError(urlDecision.reason).message), redirects);

    let headers: Record<string, string>;
    try {
      // The target's `header` values (credentials, often) and the signature are meant for the
      // target's origin: a redirect elsewhere gets neither, as an HTTP client drops Authorization
      // on a redirect to another host.
      const sameOrigin = redirects === 0 || new URL(url).origin === origin;
      headers = buildHeaders(sameOrigin ? input : { ...input, extraHeaders: undefined, signer: undefined }, url, nowMs);
    } catch (error) {
      // A rotation gap (no secret valid yet) heals with time or a reload, so it is retried, not dead.
      if (error instanceof NoValidSecretError) return withRedirects(resultForNetworkError(error.message), redirects);
      throw error;
    }

    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, { method: "POST", headers, body: input.body, dispatcher: input.dispatcher, signal: abort });
    } catch (error) {
      if (input.signal?.aborted) throw abortError(input.signal);
      if (isEgressDenied(error)) return withRedirects(resultForPolicyDenial(messageOf(error)), redirects);
      if (abort.timedOut) return withRedirects(resultForNetworkError(`timeout after ${input.timeoutMs} ms`), redirects);
      if (isInvalidRequest(error)) {
        // The stored message cannot be sent as an HTTP request (e.g. a header value undici refuses): every retry would fail the same way.
        return withRedirects({ outcome: "dead", deadReason: "no_retry", error: messageOf(error) }, redirects);
      }
      return withRedirects(resultForNetworkError(messageOf(error)), redirects);
    }

    const status = response.statusCode;
    const location = headerValue(response.headers.location);
    await drainBody(response.body, input.maxResponseBytes ?? defaultMaxResponseBytes);
    if (input.signal?.aborted) throw abortError(input.signal);

    if (redirectStatuses.has(status) && policy.redirects && location) {
      if (redirects + 1 > maxRedirects) {
        return withRedirects({ outcome: "dead", deadReason: "no_retry", statusCode: status, error: `more than ${maxRedirects} redirects` }, redirects);
      }
      try {
        url = new URL(location, url).toString();
      } catch {
        return withRedirects({ outcome: "dead", deadReason: "no_retry", statusCode: status, error: `invalid redirect location ${JSON.stringify(location)}` }, redirects);
      }
      // The body is re-POSTed whatever the 3xx code: turning a webhook into a GET would ack an undelivered message.
      continue;
    }
    const retryAfterMs = parseRetryAfter(headerValue(response.headers["retry-after"]), nowMs);
    return withRedirects(resultForStatus(status, retryAfterMs), redirects);
  }
}

/**
 * Stored headers minus hop-by-hop ones and those in Spool's namespace, then the target's headers,
 * then the attempt's trace context (tracing on), then the Spool headers, then the signature. A sender's own `X-Spool-*` (a forged
 * X-Spool-Signature, say) never reaches the target: that namespace is what Spool itself sends.
 */
export function buildHeaders(input: Pick<PushInput, "headers" | "extraHeaders" | "traceHeaders" | "messageId" | "attempt" | "signer" | "body">, url: string, nowMs: number): Record<string, string> {
  const byLowerName = new Map<string, [string, string]>();
  const put = (name: string, value: string) => byLowerName.set(name.toLowerCase(), [name, value]);
  for (const [name, value] of Object.entries(input.headers)) {
    const lower = name.toLowerCase();
    if (!hopByHopHeaders.has(lower) && !lower.startsWith("x-spool-")) put(name, value);
  }
  for (const [name, value] of Object.entries(input.extraHeaders ?? {})) put(name, value);
  if (input.traceHeaders) for (const [name, value] of Object.entries(input.traceHeaders)) put(name, value);
  put("X-Spool-Message-Id", input.messageId);
  put("X-Spool-Attempt", String(input.attempt));
  if (input.signer) {
    for (const [name, value] of Object.entries(input.signer({ method: "POST", url, body: input.body, messageId: input.messageId, nowMs }))) put(name, value);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of byLowerName.values()) headers[name] = value;
  return headers;
}

/**
 * Reads and discards the response body, at most `limitBytes` of it: past the limit (or when the
 * Content-Length says so) the stream is destroyed, so a huge or endless body costs one connection,
 * not memory or time. Errors are ignored: the outcome is decided by the status line, and a body cut
 * short by the timeout does not change it. (undici's dump, not an async iterator: it is the cheaper
 * of the two per delivery.)
 */
async function drainBody(body: Dispatcher.ResponseData["body"], limitBytes: number): Promise<void> {
  try {
    await body.dump({ limit: Math.max(1, limitBytes) });
  } catch {
    // see above
  }
}

const urlDecisionCache = new WeakMap<CompiledEgressPolicy, Map<string, EgressDecision>>();

/** The URL-level decision is a pure function of (policy, url); targets repeat, so remember it. */
function cachedUrlDecision(policy: CompiledEgressPolicy, url: string): EgressDecision {
  let byUrl = urlDecisionCache.get(policy);
  if (!byUrl) urlDecisionCache.set(policy, (byUrl = new Map()));
  let decision = byUrl.get(url);
  if (!decision) {
    decision = checkEgressUrl(policy, url);
    if (byUrl.size >= 1024) byUrl.clear(); // redirect targets are attacker-chosen: keep the cache bounded
    byUrl.set(url, decision);
  }
  return decision;
}

function toCompiled(policy: EgressPolicy | CompiledEgressPolicy): CompiledEgressPolicy {
  return "allowRules" in policy ? policy : compileEgressPolicy(policy);
}

function withRedirects(result: AttemptResult, redirects: number): PushResult {
  return redirects > 0 ? { ...result, redirects } : result;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function isInvalidRequest(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === "UND_ERR_INVALID_ARG" || code === "UND_ERR_NOT_SUPPORTED";
}

function messageOf(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${typeof code === "string" ? `${code} ` : ""}${error.message}${cause}`;
  }
  return String(error);
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException("delivery aborted", "AbortError");
}
