// `auth basic "user" "pass"` (repeatable): RFC 7617 credentials, compared in constant time.
import { safeEqual } from "../../auth/constant-time.js";
import { fail, headerValue, type RequestHeaders, type VerifyFailure } from "../../auth/types.js";

export interface BasicCredential {
  username: string;
  password: string;
}

export type BasicResult = { ok: true; username: string } | VerifyFailure;

export function verifyBasicAuth(headers: RequestHeaders, credentials: readonly BasicCredential[]): BasicResult {
  const authorization = headerValue(headers, "authorization");
  if (authorization === undefined) return fail("missing_credentials");
  const match = /^\s*basic[ \t]+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(authorization);
  if (!match) return fail("malformed_credentials");
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return fail("malformed_credentials");
  const username = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  // Both halves of every pair are compared; `&` (not `&&`) keeps the password compare from being skipped.
  let matched: string | undefined;
  for (const credential of credentials) {
    const equal = Number(safeEqual(username, credential.username)) & Number(safeEqual(password, credential.password));
    if (equal === 1 && matched === undefined) matched = credential.username;
  }
  return matched === undefined ? fail("invalid_credentials") : { ok: true, username: matched };
}
