// The syntax rules shared by the Spoolfile and the APIs, in one place: header names and values,
// management labels, and segment-bounded path coverage. Pure; the compiler validates config with
// them and the runtime validates requests with the same functions.

/** RFC 9110 token characters: the only valid header names. */
const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** HTAB, visible ASCII, space and obs-text (Latin-1): what an HTTP header value can carry. */
const HTTP_HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const CONTROL_CHARACTER = /[\x00-\x08\x0a-\x1f\x7f]/;

export function isHttpToken(name: string): boolean {
  return HTTP_TOKEN.test(name);
}

export function isHttpHeaderValue(value: string): boolean {
  return HTTP_HEADER_VALUE.test(value);
}

/** Why a header value cannot be sent, or undefined when it can. */
export function headerValueProblem(value: string): "control_character" | "not_latin1" | undefined {
  if (CONTROL_CHARACTER.test(value)) return "control_character";
  return HTTP_HEADER_VALUE.test(value) ? undefined : "not_latin1";
}

/** `application` and `endpoint_name` (docs/spoolfile.md "Routes"). */
export const LABEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export function isValidLabel(text: string): boolean {
  return LABEL_PATTERN.test(text);
}

/** `/a` covers `/a` and `/a/b`, never `/a-b`; `/` covers every path. Used on the ingress hot path. */
export function pathCovers(prefix: string, path: string): boolean {
  if (prefix === "/") return path.startsWith("/");
  if (!path.startsWith(prefix)) return false;
  return path.length === prefix.length || path.charCodeAt(prefix.length) === 0x2f; // "/"
}

const DURATION_UNIT_MS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
// Longer units first, so "ms" is not read as "m" followed by "s".
const DURATION_PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)/y;

/**
 * The longest duration Spool accepts: 100 years (36500d). Any clock time plus it is still a valid
 * date (RFC 3339 in every answer); far longer ones (`2500000000h`) made lease and retry times no
 * Date can hold.
 */
export const MAX_DURATION_MS = 36_500 * 86_400_000;
export const MAX_DURATION_TEXT = "36500d";

/**
 * "250ms", "30s", "5m", "1h30m", "7d" (and "0") → milliseconds, or undefined when the text is not a
 * duration or is longer than MAX_DURATION_MS. The one duration grammar of Spool: Spoolfile values and
 * API request fields (`lease_ttl`, `max_wait`, `delay`, `window`) are read by this function.
 * Negative values are not durations.
 */
export function parseDurationMs(text: string): number | undefined {
  if (text === "0") return 0;
  if (text.length === 0 || text.length > 64) return undefined;
  let totalMs = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < text.length) {
    const at = DURATION_PART.lastIndex;
    const match = DURATION_PART.exec(text);
    if (!match || match.index !== at) return undefined;
    totalMs += Number(match[1]) * DURATION_UNIT_MS[match[2]];
  }
  const rounded = Math.round(totalMs);
  return rounded <= MAX_DURATION_MS ? rounded : undefined;
}

/**
 * Headers a deliver `header` may not set: the HTTP client refuses them (Transfer-Encoding, Expect,
 * Keep-Alive, Upgrade), or, fixed in the config, they would frame every body but one wrongly
 * (Content-Length). Every message sent with one fails.
 */
export const UNSETTABLE_DELIVER_HEADERS: ReadonlySet<string> = new Set(["transfer-encoding", "content-length", "expect", "keep-alive", "upgrade"]);

/**
 * The HMAC key of a Standard Webhooks secret: base64 (canonical, with or without padding),
 * optionally prefixed `whsec_`, surrounding whitespace ignored. Undefined when the text is not such
 * base64 or decodes to no bytes (`whsec_`, `whsec_A`): an empty key is one anyone can sign with.
 * The one decoder of the compiler's check, push signing and ingress verification.
 */
export function decodeStandardWebhooksKey(value: string): Buffer | undefined {
  const text = value.trim();
  const base64 = text.startsWith("whsec_") ? text.slice("whsec_".length) : text;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return undefined;
  const key = Buffer.from(base64, "base64");
  // Canonical only: re-encoding gives the text back (a stray trailing character, "A" or "AAAAA",
  // is not silently dropped).
  if (key.length === 0 || key.toString("base64").replace(/=+$/, "") !== base64.replace(/=+$/, "")) return undefined;
  return key;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Date.UTC without its mapping of years 0–99 to 1900–1999 (`0000-01-01` is year 0, not 1900). */
function utcMs(year: number, monthIndex: number, day: number, hour = 0, minute = 0, second = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

/**
 * Epoch ms of an RFC 3339 timestamp, or undefined when the text is not one (calendar-checked).
 * Digits below the millisecond round down, or with `round: "up"` up: an exclusive upper bound
 * (`before`) compared with whole-millisecond times must round up, so that `…02.0001Z` keeps what
 * was received at `…02.000Z`, which is before it.
 */
export function parseRfc3339Ms(text: string, round: "down" | "up" = "down"): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 60) return undefined;
  const daysInMonth = new Date(utcMs(year, month, 0)).getUTCDate();
  if (day < 1 || day > daysInMonth) return undefined;
  let offsetMin = 0;
  if (m[9] !== undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offsetMin = (m[9] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const nanos = m[7] ? Number(m[7].slice(1).padEnd(9, "0")) : 0;
  const fractionMs = Math.floor(nanos / 1_000_000) + (round === "up" && nanos % 1_000_000 > 0 ? 1 : 0);
  const epochMs = utcMs(year, month - 1, day, hour, minute, Math.min(second, 59)) + fractionMs - offsetMin * 60_000;
  // An offset can carry a written year 0000 or 9999 past the years RFC 3339 can write in UTC, the
  // form every answer uses: such an instant could never be printed back or asked about.
  return epochMs >= FIRST_RFC3339_MS && epochMs <= LAST_RFC3339_MS ? epochMs : undefined;
}

/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z, the range of 4-digit-year UTC instants. */
const FIRST_RFC3339_MS = utcMs(0, 0, 1);
const LAST_RFC3339_MS = utcMs(10000, 0, 1) - 1;
