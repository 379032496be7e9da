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

/** `application` and `endpoint_name` (webhook-queue.md "Management labels"). */
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
