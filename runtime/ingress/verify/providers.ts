// `auth hmac { provider … }` presets (docs/decisions.md D14).
// Presets carry no nonce: the providers retry with the same signature, and their own timestamps
// (where they have one) bound the replay window.
import { decodeStandardWebhooksKey, type HmacProvider } from "../../../compiler/index.js";
import { anySecretSigns } from "../../auth/hmac.js";
import { secretsValidAt } from "../../auth/secrets.js";
import { fail, headerValue, type InboundRequest, type ResolvedSecret, type VerifyFailure } from "../../auth/types.js";

export type { HmacProvider };

export const HMAC_PROVIDERS: readonly HmacProvider[] = ["github", "gitea", "stripe", "cituro", "standard_webhooks"];

export interface ProviderOptions {
  secrets: readonly ResolvedSecret[];
  /** Timestamp tolerance for stripe, cituro and standard_webhooks, as the compiler resolved it (compiler/defaults.ts). */
  toleranceMs: number;
}

export type ProviderResult = { ok: true } | VerifyFailure;

// Bounds the work an attacker can ask for with a header full of candidate signatures.
const MAX_SIGNATURE_CANDIDATES = 16;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

export function verifyProvider(provider: HmacProvider, request: InboundRequest, options: ProviderOptions): ProviderResult {
  switch (provider) {
    case "github":
      return verifyBodySignature(request, options, "X-Hub-Signature-256", "sha256=");
    case "gitea":
      return verifyBodySignature(request, options, "X-Gitea-Signature", "");
    case "stripe":
      return verifyTimestampedPairs(request, options, "Stripe-Signature", "v1", 1000);
    case "cituro":
      // Same "t=…,<tag>=<hex>" header and "<t>.<body>" signed string as Stripe, with tag `s` and
      // t in unix milliseconds (docs/decisions.md D14; the reference implementation
      // reuses its Stripe verifier for it). The signed string uses t exactly as sent.
      return verifyTimestampedPairs(request, options, "X-CITURO-SIGNATURE", "s", 1);
    case "standard_webhooks":
      return verifyStandardWebhooks(request, options);
  }
}

/** github / gitea: hex HMAC-SHA256 of the raw body, no timestamp; secrets valid now are tried. */
function verifyBodySignature(request: InboundRequest, options: ProviderOptions, header: string, prefix: string): ProviderResult {
  const raw = headerValue(request.headers, header)?.trim();
  if (!raw) return fail("missing_credentials");
  if (!raw.startsWith(prefix)) return fail("malformed_credentials");
  const hex = raw.slice(prefix.length);
  if (!HEX_SHA256.test(hex)) return fail("malformed_credentials");
  const secrets = secretsValidAt(options.secrets, request.nowMs);
  if (secrets.length === 0) return fail("no_secret_valid");
  return anySecretSigns(secrets, request.body, Buffer.from(hex, "hex")) ? { ok: true } : fail("invalid_credentials");
}

/** stripe / cituro: `t=<ts>,<tag>=<hex>[,<tag>=<hex>…]` over `<t>.<body>`; any listed signature may match. */
function verifyTimestampedPairs(
  request: InboundRequest,
  options: ProviderOptions,
  header: string,
  tag: string,
  timestampUnitMs: number,
): ProviderResult {
  const raw = headerValue(request.headers, header)?.trim();
  if (!raw) return fail("missing_credentials");
  let timestampText: string | undefined;
  const signatures: Buffer[] = [];
  for (const part of raw.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === "t" && timestampText === undefined) timestampText = value;
    else if (key === tag && HEX_SHA256.test(value) && signatures.length < MAX_SIGNATURE_CANDIDATES) {
      signatures.push(Buffer.from(value, "hex"));
    }
  }
  if (timestampText === undefined || !/^\d{1,16}$/.test(timestampText) || signatures.length === 0) {
    return fail("malformed_credentials");
  }
  const timestampMs = Number(timestampText) * timestampUnitMs;
  if (Math.abs(request.nowMs - timestampMs) > options.toleranceMs) {
    return fail("timestamp_out_of_tolerance");
  }
  const secrets = secretsValidAt(options.secrets, timestampMs);
  if (secrets.length === 0) return fail("no_secret_valid");
  const message = Buffer.concat([Buffer.from(`${timestampText}.`, "utf8"), request.body]);
  return anySecretSigns(secrets, message, ...signatures) ? { ok: true } : fail("invalid_credentials");
}

/**
 * Standard Webhooks (standardwebhooks.com): `webhook-signature` holds space-separated
 * `v1,<base64>` entries over `${webhook-id}.${webhook-timestamp}.${body}`; the key is the secret
 * after an optional `whsec_` prefix, base64-decoded.
 */
function verifyStandardWebhooks(request: InboundRequest, options: ProviderOptions): ProviderResult {
  const id = headerValue(request.headers, "webhook-id")?.trim();
  const timestampText = headerValue(request.headers, "webhook-timestamp")?.trim();
  const signatureList = headerValue(request.headers, "webhook-signature")?.trim();
  if (!id || !timestampText || !signatureList) return fail("missing_credentials");
  if (!/^\d{1,15}$/.test(timestampText)) return fail("malformed_credentials");
  const signatures: Buffer[] = [];
  for (const entry of signatureList.split(/\s+/)) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
    const encoded = entry.slice(comma + 1);
    if (!/^[A-Za-z0-9+/]{43}=$/.test(encoded)) continue;
    if (signatures.length < MAX_SIGNATURE_CANDIDATES) signatures.push(Buffer.from(encoded, "base64"));
  }
  if (signatures.length === 0) return fail("malformed_credentials");
  const timestampMs = Number(timestampText) * 1000;
  if (Math.abs(request.nowMs - timestampMs) > options.toleranceMs) {
    return fail("timestamp_out_of_tolerance");
  }
  const secrets = secretsValidAt(options.secrets, timestampMs).flatMap((secret) => decodeStandardWebhooksKey(secret.toString("utf8")) ?? []);
  if (secrets.length === 0) return fail("no_secret_valid");
  const message = Buffer.concat([Buffer.from(`${id}.${timestampText}.`, "utf8"), request.body]);
  return anySecretSigns(secrets, message, ...signatures) ? { ok: true } : fail("invalid_credentials");
}

