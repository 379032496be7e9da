// A URL's credentials as they may be shown: its userinfo password, its query and fragment values
// and `;name=value` parameters masked. One implementation for every place a configured URL is
// printed: `config diff --semantic` (diff.ts), compile diagnostics about a deliver target, and the
// runtime's delivery log lines (docs/delivery.md "Delivery logs"), where a URL may come from a
// receiver (a redirect's Location) and need not parse.

export const URL_REDACTED = "(redacted)";

/** `scheme://user:password@` or protocol-relative `//user:password@`, anywhere in a text: the password part. */
const URL_PASSWORD = /((?:\b[a-z][a-z0-9+.-]*:)?\/\/[^/@\s:"]*:)[^/@\s"]*@/gi;

/** A URL in a text, with or without its scheme: up to a space, a quote or an angle bracket. */
const URL_CANDIDATE = /(?:\b[a-z][a-z0-9+.-]*:)?\/\/[^\s"'<>]*/gi;

/** Every URL's password in `text` as `(redacted)`; the user name stays. */
export function redactUrlPasswords(text: string): string {
  return text.replace(URL_PASSWORD, `$1${URL_REDACTED}@`);
}

/**
 * Every URL's query and fragment values and `;name=value` parameters in `text` as `(redacted)`:
 * `?token=…`, `#access_token=…` and `;token=…` carry credentials as often as a URL's password does.
 * Names stay, and so does an empty value or one that is a placeholder. A URL that does not parse
 * has its whole query masked: what is a value there cannot be told.
 */
export function redactUrlQueryValues(text: string): string {
  return text.replace(URL_CANDIDATE, redactOneUrl);
}

/** `{$NAME:default}`: the default, a value written in the Spoolfile (often a credential), is never shown. */
const PLACEHOLDER_DEFAULT = /\{\$([A-Za-z_][A-Za-z0-9_]*):[^}]*\}/g;

/** Every `{$NAME:default}` in `text` as `{$NAME:(redacted)}` (docs/cli.md "config diff"). */
export function redactPlaceholderDefaults(text: string): string {
  return text.replace(PLACEHOLDER_DEFAULT, (_whole, name: string) => `{$${name}:${URL_REDACTED}}`);
}

/** All three: what a configured URL (or a text quoting one) may show in output and logs. */
export function redactUrl(text: string): string {
  return redactUrlQueryValues(redactUrlPasswords(redactPlaceholderDefaults(text)));
}

function redactOneUrl(url: string): string {
  // A `]` after the query or fragment ends the URL (a text's own bracket); before it, it may close an IPv6 host.
  const start = url.search(/[?#]/);
  const head = start < 0 ? url : url.slice(0, start);
  const close = start < 0 ? -1 : url.indexOf("]", start);
  const tail = start < 0 ? "" : close < 0 ? url.slice(start) : url.slice(start, close);
  const after = close < 0 ? "" : url.slice(close);
  const hash = tail.indexOf("#");
  const query = hash < 0 ? tail : tail.slice(0, hash);
  const fragment = hash < 0 ? "" : tail.slice(hash);
  const shownQuery = query.length <= 1 ? query : parses(url) ? `?${redactPairs(query.slice(1))}` : `?${URL_REDACTED}`;
  const shownFragment = fragment.length <= 1 ? fragment : `#${redactPairs(fragment.slice(1))}`;
  return redactPathParameters(head) + shownQuery + shownFragment + after;
}

/** Whether the URL parses, placeholders taken as plain text (`{env.HOST}` is written, not broken). */
function parses(url: string): boolean {
  const plain = url.replace(/\{[^{}]*\}/g, "x");
  try {
    new URL(plain.startsWith("//") ? `http:${plain}` : plain);
    return true;
  } catch {
    return false;
  }
}

/** `/x;token=abc` in a URL's path: the parameter's value. */
function redactPathParameters(head: string): string {
  return head.replace(/;([^;=/]+)=([^;/]*)/g, (whole, name: string, value: string) => (keptValue(value) ? whole : `;${name}=${URL_REDACTED}`));
}

function redactPairs(pairs: string): string {
  return pairs.split(/([&;])/).map((part, i) => (i % 2 === 1 ? part : redactPair(part))).join("");
}

function redactPair(pair: string): string {
  const eq = pair.indexOf("=");
  // `token%3Dabc`: an encoded `=`, read as a name and its value.
  if (eq < 0) return /%3d/i.test(pair) ? URL_REDACTED : pair;
  return keptValue(pair.slice(eq + 1)) ? pair : `${pair.slice(0, eq + 1)}${URL_REDACTED}`;
}

function keptValue(value: string): boolean {
  return value === "" || /^\{[^{}]*\}$/.test(value);
}
