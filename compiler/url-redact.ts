// A URL's credentials as they may be shown: its userinfo password and its query values masked.
// One implementation for every place a configured URL is printed: `config diff --semantic`
// (diff.ts), compile diagnostics about a deliver target, and the runtime's delivery log lines.

export const URL_REDACTED = "(redacted)";

/** `scheme://user:password@`, anywhere in a text: the password part. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^/@\s:]*:)[^/@\s]*@/gi;

/** A URL's query, wherever it appears in a text: up to a quote, a bracket, a fragment or a space. */
const URL_QUERY = /([a-z][a-z0-9+.-]*:\/\/[^\s"?#\]]*\?)([^\s"#\]]*)/gi;

/** Every URL's password in `text` as `(redacted)`; the user name stays. */
export function redactUrlPasswords(text: string): string {
  return text.replace(URL_PASSWORD, `$1${URL_REDACTED}@`);
}

/**
 * Every URL's query values in `text` as `(redacted)`: `?token=…` and `?key=…` carry credentials as
 * often as a URL's password does. Names stay, and so does an empty value or one that is a placeholder.
 */
export function redactUrlQueryValues(text: string): string {
  return text.replace(URL_QUERY, (_whole, head: string, query: string) => head + query.split("&").map(redactQueryPair).join("&"));
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

function redactQueryPair(pair: string): string {
  const eq = pair.indexOf("=");
  if (eq < 0) return pair;
  const value = pair.slice(eq + 1);
  return value === "" || /^\{[^{}]*\}$/.test(value) ? pair : `${pair.slice(0, eq + 1)}${URL_REDACTED}`;
}
