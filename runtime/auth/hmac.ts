// Generic `auth hmac`: X-Signature = hex HMAC-SHA256 over
// "METHOD\npath\ntimestamp\nhex(sha256(body))", X-Timestamp in unix seconds, X-Nonce single-use
// within the tolerance, and so is the signature (ReplayToken). METHOD comes first, as in the
// reference's documentation (its code signs timestamp-first) and in Spool's outbound signing.
import { createHash, createHmac } from "node:crypto";
import { macEqual } from "./constant-time.js";
import { secretsValidAt } from "./secrets.js";
import { fail, headerValue, type InboundRequest, type ResolvedSecret, type VerifyFailure } from "./types.js";

export const MAX_NONCE_LENGTH = 256;

/** The IR's `auth hmac` settings, header names and tolerance as the compiler resolved them (compiler/defaults.ts). */
export interface GenericHmacOptions {
  secrets: readonly ResolvedSecret[];
  signatureHeader: string;
  timestampHeader: string;
  nonceHeader: string;
  toleranceMs: number;
}

/**
 * What makes a verified request single-use: its nonce and its signature. The string to sign does
 * not hold the nonce (the documented format has none), so a captured request sent again with another nonce
 * still verifies; its signature, the same, is what is refused then (and a new query string, also
 * unsigned, does not change it). The caller claims both keys in the NonceCache only now that the
 * signature verified (so forged requests cannot burn nonces), commits them once the message is
 * stored and releases them if the message is refused, so the sender's retry is accepted
 * (docs/decisions.md D14).
 */
export interface ReplayToken {
  /** `nonce:<nonce>` and `mac:<signature, lower-case hex>`. */
  keys: readonly string[];
  /** Both are single-use until the request's timestamp leaves the tolerance window. */
  expiresAtMs: number;
}

export type GenericHmacResult = { ok: true; replay: ReplayToken } | VerifyFailure;

export function hmacStringToSign(method: string, path: string, timestampText: string, body: Buffer): string {
  const bodyHash = createHash("sha256").update(body).digest("hex");
  return `${method.toUpperCase()}\n${path}\n${timestampText}\n${bodyHash}`;
}

export function verifyGenericHmac(request: InboundRequest, options: GenericHmacOptions): GenericHmacResult {
  const { toleranceMs } = options;
  const signatureText = headerValue(request.headers, options.signatureHeader)?.trim();
  const timestampText = headerValue(request.headers, options.timestampHeader)?.trim();
  const nonce = headerValue(request.headers, options.nonceHeader)?.trim();
  if (!signatureText || !timestampText || !nonce) return fail("missing_credentials");
  if (!/^\d{1,15}$/.test(timestampText) || nonce.length > MAX_NONCE_LENGTH) return fail("malformed_credentials");
  if (!/^[0-9a-fA-F]{64}$/.test(signatureText)) return fail("malformed_credentials");

  const timestampMs = Number(timestampText) * 1000;
  if (Math.abs(request.nowMs - timestampMs) > toleranceMs) return fail("timestamp_out_of_tolerance");

  // Rotation: the secret that was valid when the sender signed (its timestamp), not the one valid now.
  const secrets = secretsValidAt(options.secrets, timestampMs);
  if (secrets.length === 0) return fail("no_secret_valid");
  const given = Buffer.from(signatureText, "hex");
  const message = hmacStringToSign(request.method, request.path, timestampText, request.body);
  if (!anySecretSigns(secrets, message, given)) return fail("invalid_credentials");
  return { ok: true, replay: { keys: [`nonce:${nonce}`, `mac:${signatureText.toLowerCase()}`], expiresAtMs: timestampMs + toleranceMs } };
}

/** True when any secret's HMAC-SHA256 of `message` equals one of `givenMacs`; every pair is compared. */
export function anySecretSigns(secrets: readonly Buffer[], message: Buffer | string, ...givenMacs: Buffer[]): boolean {
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac("sha256", secret).update(message).digest();
    for (const given of givenMacs) {
      if (macEqual(expected, given)) matched = true;
    }
  }
  return matched;
}
