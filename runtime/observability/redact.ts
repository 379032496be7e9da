// Secrets never reach a log line: header values that carry credentials, fields whose names say
// "secret", credentials inside free text (Bearer/Basic tokens, passwords in URLs).

export const REDACTED = "[redacted]";

// Header names whose values are credentials (docs/decisions.md D8, D11: never stored, never logged).
const CREDENTIAL_HEADERS = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie"]);
// Field names that hold secrets wherever they appear, including signature headers and DSNs.
const SECRET_NAME = /secret|token|password|passwd|api[-_]?key|signature|credential|dsn|private[-_]?key/i;
const AUTH_IN_TEXT = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi;
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]*):[^\s@/]*@/gi;
const MAX_DEPTH = 8;

export function isSecretField(name: string): boolean {
  return CREDENTIAL_HEADERS.has(name.toLowerCase()) || SECRET_NAME.test(name);
}

/** Masks credentials that appear inside free text ("Bearer abc", "postgres://u:pw@host"). */
export function redactText(text: string): string {
  return text.replace(AUTH_IN_TEXT, `$1 ${REDACTED}`).replace(URL_PASSWORD, `$1:${REDACTED}@`);
}

// In prose an operator wrote ("basic cleanup of the DLQ", "bearer duty"), only a token-shaped word
// after Bearer/Basic is a credential: 8+ characters with a digit or one of . _ ~ + / = -, or with
// a capital past its first letter (base64 of user:pass), or 20+ letters. Case-sensitive classes,
// so the scheme's any-case spelling is written out.
const AUTH_IN_PROSE =
  /\b([Bb][Ee][Aa][Rr][Ee][Rr]|[Bb][Aa][Ss][Ii][Cc])\s+(?:(?=[A-Za-z]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}|(?=[A-Za-z][a-z]*[A-Z])[A-Za-z]{8,}|[A-Za-z]{20,})/g;

/**
 * redactText for text people write to be read back (the audit reason and actor): credentials are
 * masked, ordinary words after "basic" or "bearer" are kept.
 */
export function redactProse(text: string): string {
  return text.replace(AUTH_IN_PROSE, `$1 ${REDACTED}`).replace(URL_PASSWORD, `$1:${REDACTED}@`);
}

/**
 * A copy of `value` safe to log: secret-named fields masked at any depth, credentials in strings
 * masked, Errors reduced to name and message, cycles and deep nesting cut.
 */
export function redact(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === "string") return redactText(value);
  if (typeof value === "bigint") return value.toString();
  if (value === null || typeof value !== "object") return value;
  if (depth >= MAX_DEPTH) return "[truncated]";
  if (seen.has(value)) return "[circular]";
  seen.add(value);
  if (value instanceof Error) {
    return { name: value.name, message: redactText(value.message) };
  }
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  if (Array.isArray(value)) return value.map((entry) => redact(entry, depth + 1, seen));
  if (value instanceof Date) return value.toISOString();
  const out: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(value)) {
    out[name] = isSecretField(name) && entry !== undefined && entry !== null ? REDACTED : redact(entry, depth + 1, seen);
  }
  return out;
}
