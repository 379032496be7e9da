// One entry point for a route's ingress authentication: the route's auth as plain values in, an
// outcome out. The ingress handler maps a refusal to its catalogue error with ingressAuthError().
import { verifyGenericHmac, type GenericHmacOptions, type ReplayToken } from "../../auth/hmac.js";
import { BEARER_CHALLENGE, verifyBearerToken } from "../../auth/token.js";
import type { InboundRequest, VerifyFailureReason } from "../../auth/types.js";
import { apiError, type ApiError } from "../../errors.js";
import { verifyBasicAuth, type BasicCredential } from "./basic.js";
import { forwardAuth, type ForwardAuthOptions } from "./forward.js";
import { verifyProvider, type HmacProvider, type ProviderOptions } from "./providers.js";

export type IngressAuth =
  | { kind: "none" }
  | { kind: "token"; tokens: readonly (string | Buffer)[] }
  | { kind: "basic"; credentials: readonly BasicCredential[] }
  | { kind: "hmac"; options: GenericHmacOptions; runtimePools?: readonly string[] }
  | { kind: "provider"; provider: HmacProvider; options: ProviderOptions; runtimePools?: readonly string[] }
  | { kind: "forward"; url: string; options: ForwardAuthOptions };

export type IngressAuthOutcome =
  | {
      ok: true;
      /** Generic HMAC only: claim it in the NonceCache, commit after storing, release on refusal. */
      replay?: ReplayToken;
      /** Forward auth only: headers to add to the stored message. */
      copiedHeaders?: Record<string, string>;
    }
  | {
      ok: false;
      status: 401 | 403 | 503;
      reason: VerifyFailureReason | "denied" | "forbidden" | "unavailable";
      /** A 401's WWW-Authenticate challenge (RFC 9110 §11.6.1), for the schemes that have one. */
      challenge?: string;
      /** Why forward auth was unavailable, for the runtime log (never sent to the client). */
      detail?: string;
    };

/** The Basic challenge (the Bearer one is shared with the Pull and Admin APIs); signatures have none. */
const BASIC_CHALLENGE = 'Basic realm="spool", charset="UTF-8"';

const ACCEPTED: IngressAuthOutcome = Object.freeze({ ok: true });

/**
 * The route's verdict on a request. Forward auth asks another service and answers with a promise;
 * every other kind decides synchronously and answers with the outcome itself, so the ingress hot
 * path does not wait a turn for a decision already made.
 */
export function authenticateIngress(auth: IngressAuth, request: InboundRequest, signal?: AbortSignal): IngressAuthOutcome | Promise<IngressAuthOutcome> {
  switch (auth.kind) {
    case "none":
      return ACCEPTED;
    case "token":
    case "basic":
      return authenticateByHeaders(auth, request.headers)!;
    case "hmac": {
      const result = verifyGenericHmac(request, auth.options);
      return result.ok ? { ok: true, replay: result.replay } : { ok: false, status: 401, reason: result.reason };
    }
    case "provider":
      return unauthorizedUnless(verifyProvider(auth.provider, request, auth.options));
    case "forward":
      return forwardAuth(auth.url, { ...auth.options, signal: signal ?? auth.options.signal }, request).then(
        (result): IngressAuthOutcome => (result.ok ? { ok: true, copiedHeaders: result.copiedHeaders } : result),
      );
  }
}

/**
 * The verdict of the auth kinds that need only the request headers (token, basic), so ingress can
 * decide before reading the body; undefined for the kinds that need the body (signatures, forward
 * auth) and for none, which authenticateIngress then decides.
 */
export function authenticateByHeaders(auth: IngressAuth, headers: InboundRequest["headers"]): IngressAuthOutcome | undefined {
  switch (auth.kind) {
    case "token":
      return unauthorizedUnless(verifyBearerToken(headers, auth.tokens), BEARER_CHALLENGE);
    case "basic":
      return unauthorizedUnless(verifyBasicAuth(headers, auth.credentials), BASIC_CHALLENGE);
    default:
      return undefined;
  }
}

function unauthorizedUnless(result: { ok: true } | { ok: false; reason: VerifyFailureReason }, challenge?: string): IngressAuthOutcome {
  if (result.ok) return ACCEPTED;
  return challenge === undefined ? { ok: false, status: 401, reason: result.reason } : { ok: false, status: 401, reason: result.reason, challenge };
}

/** The catalogue error for a refused ingress authentication (401 unauthorized, 403 forbidden, 503 auth_unavailable). */
export function ingressAuthError(outcome: Extract<IngressAuthOutcome, { ok: false }>, options: { closeConnection?: boolean } = {}): ApiError {
  switch (outcome.status) {
    case 401:
      return apiError("unauthorized", `authentication failed: ${outcome.reason}`, {
        surface: "ingress",
        closeConnection: options.closeConnection,
        ...(outcome.challenge === undefined ? {} : { headers: { "WWW-Authenticate": outcome.challenge } }),
      });
    case 403:
      return apiError("forbidden", "the authorization service refused the request", { surface: "ingress" });
    case 503:
      return apiError("auth_unavailable", "the authorization service is unavailable", {
        surface: "ingress",
        headers: { "Retry-After": "5" },
      });
  }
}

export { NonceCache, type NonceClaim } from "./nonce-cache.js";
export type { ReplayToken } from "../../auth/hmac.js";
export type { InboundRequest, ResolvedSecret, RequestHeaders, VerifyFailureReason } from "../../auth/types.js";
export type { BasicCredential, ForwardAuthOptions, GenericHmacOptions, HmacProvider, ProviderOptions };
export { HMAC_PROVIDERS } from "./providers.js";
export { withRuntimeVersions } from "./runtime-versions.js";
