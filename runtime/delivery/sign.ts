// Outbound request signing (docs/decisions.md D35; docs/delivery.md "Signing").
// The caller passes the time, so a test can compute the expected signature independently. A `file:`
// secret is read again when its last read is FILE_SECRET_REFRESH_MS old (docs/delivery.md
// "Signing"), so a rotated file takes effect without a reload.
import { createHash, createHmac } from "node:crypto";
import { decodeStandardWebhooksKey, readSecretFile, type SignConfig } from "../../compiler/index.js";
import { hmacStringToSign } from "../auth/hmac.js";
import type { ResolvedSecret } from "../auth/types.js";

/** A ResolvedSecret (runtime/auth/types.ts) whose value is text, and for a `file:` secret its file. */
export interface SigningSecret extends ResolvedSecret {
  /** The resolved secret text (never a `env:`/`file:` reference: the compiler resolved that). */
  readonly value: string;
  /** For a `file:` secret, the file's absolute path: the signer reads it again every FILE_SECRET_REFRESH_MS. */
  readonly file?: string;
}

export type SecretSelection = SignConfig["selection"];

export type SigningConfig =
  | {
      readonly mode: "hmac";
      readonly secrets: readonly SigningSecret[];
      readonly selection: SecretSelection;
      /** `signature_header` / `timestamp_header`, as the compiler resolved them (compiler/defaults.ts). */
      readonly signatureHeader: string;
      readonly timestampHeader: string;
    }
  | {
      /** https://www.standardwebhooks.com/: webhook-id, webhook-timestamp, webhook-signature. */
      readonly mode: "standard_webhooks";
      readonly secrets: readonly SigningSecret[];
      readonly selection: SecretSelection;
    };

export interface SignInput {
  readonly method: string;
  readonly url: string;
  readonly body: Buffer;
  readonly messageId: string;
  readonly nowMs: number;
}

/** Returns the headers to add, in the order they should be sent. */
export type Signer = (input: SignInput) => Record<string, string>;

/** No secret is valid right now: every secret has expired or is not valid yet. */
export class NoValidSecretError extends Error {
  constructor(nowMs: number) {
    super(`no signing secret is valid at ${new Date(nowMs).toISOString()}`);
    this.name = "NoValidSecretError";
  }
}

/** How old a `file:` secret's last read may be before the signer reads the file again. */
export const FILE_SECRET_REFRESH_MS = 60_000;

export function createSigner(config: SigningConfig): Signer {
  if (config.secrets.length === 0) throw new Error("signing needs at least one secret");
  const selection = config.selection;
  // Decoded here: a malformed key is a configuration error the caller sees at build time.
  const decode = config.mode === "standard_webhooks" ? decodeStandardWebhooksSecret : (value: string) => Buffer.from(value);
  const live = new Map(config.secrets.map((secret) => [secret, { value: secret.value, key: decode(secret.value), readAtMs: Number.NEGATIVE_INFINITY }]));
  /** The secret's current value and key; a `file:` secret's file is read again once its last read is old enough. */
  const current = (secret: SigningSecret, nowMs: number) => {
    const state = live.get(secret)!;
    if (secret.file === undefined) return state;
    // The value the compiler read counts as the first read.
    if (state.readAtMs === Number.NEGATIVE_INFINITY) state.readAtMs = nowMs;
    if (nowMs - state.readAtMs < FILE_SECRET_REFRESH_MS) return state;
    state.readAtMs = nowMs;
    try {
      const value = readSecretFile(secret.file).trim();
      if (value !== "" && value !== state.value) Object.assign(state, { key: decode(value), value });
    } catch {
      // An unreadable file or a malformed key keeps the last good value signing; so does an emptied file.
    }
    return state;
  };
  if (config.mode === "hmac") {
    const { signatureHeader, timestampHeader } = config;
    if (signatureHeader.toLowerCase() === timestampHeader.toLowerCase()) {
      throw new Error("signature and timestamp headers must differ");
    }
    return (input) => {
      const secret = current(selectSecret(config.secrets, selection, input.nowMs), input.nowMs);
      const timestamp = unixSeconds(input.nowMs);
      return {
        [signatureHeader]: signSpoolHmac(secret.value, input.method, input.url, timestamp, input.body),
        [timestampHeader]: String(timestamp),
      };
    };
  }
  return (input) => {
    const { key } = current(selectSecret(config.secrets, selection, input.nowMs), input.nowMs);
    const timestamp = unixSeconds(input.nowMs);
    return {
      "webhook-id": input.messageId,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": `v1,${signStandardWebhooks(key, input.messageId, timestamp, input.body)}`,
    };
  };
}

/**
 * Picks the secret to sign with among those with validFrom ≤ now < validUntil: the most recently
 * valid one (newest_valid, the default, so a rotation takes effect at its valid_from) or the
 * longest-valid one (oldest_valid, so receivers get time to learn the new secret first).
 */
export function selectSecret(secrets: readonly SigningSecret[], selection: SecretSelection, nowMs: number): SigningSecret {
  let chosen: SigningSecret | undefined;
  for (const secret of secrets) {
    if (secret.validFromMs !== undefined && nowMs < secret.validFromMs) continue;
    if (secret.validUntilMs !== undefined && nowMs >= secret.validUntilMs) continue;
    if (!chosen) {
      chosen = secret;
      continue;
    }
    const from = secret.validFromMs ?? -Infinity;
    const chosenFrom = chosen.validFromMs ?? -Infinity;
    // Ties go to the later declaration for newest, the earlier one for oldest.
    if (selection === "newest_valid" ? from >= chosenFrom : from < chosenFrom) chosen = secret;
  }
  if (!chosen) throw new NoValidSecretError(nowMs);
  return chosen;
}

/** hex HMAC-SHA256(secret, `METHOD\n<path without query>\n<unix seconds>\n<hex sha256(body)>`). */
export function signSpoolHmac(secret: string, method: string, url: string, unixSecondsValue: number, body: Buffer): string {
  return createHmac("sha256", secret).update(hmacStringToSign(method, signedPath(url), String(unixSecondsValue), body)).digest("hex");
}

/** base64 HMAC-SHA256(key, `<id>.<timestamp>.<body>`) per the Standard Webhooks scheme. */
export function signStandardWebhooks(key: Buffer, messageId: string, unixSecondsValue: number, body: Buffer): string {
  return createHmac("sha256", key).update(`${messageId}.${unixSecondsValue}.`).update(body).digest("base64");
}

/** The key of a Standard Webhooks secret (compiler decodeStandardWebhooksKey); throws for a malformed or empty one. */
export function decodeStandardWebhooksSecret(value: string): Buffer {
  const key = decodeStandardWebhooksKey(value);
  if (key === undefined) throw new Error("standard_webhooks secret must be non-empty base64 (optionally prefixed whsec_)");
  return key;
}

/** The URL's escaped path as sent on the request line, without the query; "/" when empty. */
export function signedPath(url: string): string {
  const path = new URL(url).pathname;
  return path === "" ? "/" : path;
}

function unixSeconds(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}
