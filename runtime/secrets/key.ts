// SPOOL_SECRET_ENCRYPTION_KEY (docs/secrets.md): base64 of exactly 32 bytes, standard or URL
// alphabet, padding optional, whitespace ignored. What is wrong with it is said without the value.

export const SECRET_KEY_VARIABLE = "SPOOL_SECRET_ENCRYPTION_KEY";
export const SECRET_KEY_BYTES = 32;

export type KeyParse = { ok: true; key: Buffer } | { ok: false; problem: string };

/** The 32-byte key, or why the variable's text is not one (never quoting it). */
export function parseEncryptionKey(text: string | undefined): KeyParse {
  if (text === undefined) return { ok: false, problem: `${SECRET_KEY_VARIABLE} is not set` };
  const compact = text.replace(/\s+/g, "");
  if (compact === "") return { ok: false, problem: `${SECRET_KEY_VARIABLE} is empty` };
  const bad = { ok: false as const, problem: `${SECRET_KEY_VARIABLE} is not base64 (standard or URL alphabet) of ${SECRET_KEY_BYTES} bytes` };
  const match = /^([A-Za-z0-9+/_-]*)(={0,2})$/.exec(compact);
  if (!match) return bad;
  const [, digits, padding] = match;
  // One alphabet per key: `+`/`/` with `-`/`_` is not something any encoder writes.
  if (/[+/]/.test(digits) && /[-_]/.test(digits)) return bad;
  if (digits.length % 4 === 1 || (padding !== "" && (digits.length + padding.length) % 4 !== 0)) return bad;
  const key = Buffer.from(digits.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  if (key.length !== SECRET_KEY_BYTES) {
    return { ok: false, problem: `${SECRET_KEY_VARIABLE} decodes to ${key.length} bytes; it must be base64 of exactly ${SECRET_KEY_BYTES} bytes` };
  }
  return { ok: true, key };
}

export interface KeyForConfig {
  /** Null when unset or unusable; runtime pools then cannot start. */
  key: Buffer | null;
  /** The config has a runtime pool and no usable key: `spool run` exits 1, a reload is refused. */
  error?: string;
  /** A key that is set but unusable where nothing needs it yet. */
  warning?: string;
}

/** The key a config needs: required once any secret has `runtime on`. */
export function encryptionKeyFor(secrets: readonly { readonly id: string; readonly runtime: boolean }[], text: string | undefined): KeyForConfig {
  const pools = secrets.filter((s) => s.runtime).map((s) => JSON.stringify(s.id));
  const parsed = parseEncryptionKey(text);
  if (parsed.ok) return { key: parsed.key };
  if (pools.length > 0) return { key: null, error: `${parsed.problem}; it is required because secret ${pools.join(", ")} has runtime on (docs/secrets.md)` };
  return text === undefined ? { key: null } : { key: null, warning: `${parsed.problem}; runtime secrets cannot be added until it is fixed and Spool restarted` };
}
