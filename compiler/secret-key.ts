// SPOOL_SECRET_ENCRYPTION_KEY (docs/secrets.md): base64 of exactly 32 bytes, standard or URL
// alphabet, padding optional, whitespace ignored. What is wrong with it is said without the value.
// The compiler checks it where a secret has `runtime on` (so `config validate` warns and `spool run`
// refuses, at start and on reload); `spool run` reads the bytes with the same rule.

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

