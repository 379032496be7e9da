// Bearer tokens: ingress `auth token`, the Pull API allowlists and the Admin API token.
import { matchesAny } from "./constant-time.js";
import { fail, headerValue, type RequestHeaders, type VerifyFailure } from "./types.js";

/** The challenge of a 401 for a missing or wrong bearer token (RFC 6750 §3). */
export const BEARER_CHALLENGE = 'Bearer realm="spool"';

export type BearerResult = { ok: true; token: string; matchedIndex: number } | VerifyFailure;

/** The token of `Authorization: Bearer <token>`; the scheme is case-insensitive. */
export function extractBearerToken(headers: RequestHeaders): string | undefined | null {
  const authorization = headerValue(headers, "authorization");
  if (authorization === undefined) return undefined;
  const match = /^\s*bearer[ \t]+(\S+)\s*$/i.exec(authorization);
  return match ? match[1] : null;
}

/**
 * Checks the request's bearer token against `allowedTokens`, comparing every candidate in
 * constant time. `matchedIndex` says which one matched (the Pull API uses it to tell a token that
 * is valid elsewhere, 403, from one that is valid nowhere, 401).
 */
export function verifyBearerToken(headers: RequestHeaders, allowedTokens: readonly (string | Buffer)[]): BearerResult {
  const token = extractBearerToken(headers);
  if (token === undefined) return fail("missing_credentials");
  if (token === null) return fail("malformed_credentials");
  const matchedIndex = matchesAny(token, allowedTokens);
  return matchedIndex >= 0 ? { ok: true, token, matchedIndex } : fail("invalid_credentials");
}
