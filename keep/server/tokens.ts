// Bearer tokens: 32 random bytes in base64url (43 characters of [A-Za-z0-9_-], 256 bits). DIR keeps
// only their SHA-256; a presented token is hashed and compared in constant time with every stored
// hash (no early exit, no lookup keyed by the token).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { TokenRow } from "./store.js";

const TOKEN = /^[A-Za-z0-9_-]{22,256}$/;

export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

export function hashToken(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/** The value of an `Authorization: Bearer <token>` header, or undefined when missing or malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^Bearer ([^\s]+)$/.exec(header);
  return m && TOKEN.test(m[1]) ? m[1] : undefined;
}

/** The identity whose stored hash matches `token`, or undefined. */
export function identify(token: string, rows: readonly TokenRow[]): string | undefined {
  const presented = hashToken(token);
  let found: string | undefined;
  for (const row of rows) {
    if (row.hash.length === presented.length && timingSafeEqual(row.hash, presented)) found ??= row.identity;
  }
  return found;
}
