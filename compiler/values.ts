import { isIP } from "node:net";
import type { Arg, Directive } from "../grammar/index.js";
import type { DiagnosticCode } from "../grammar/index.js";
import { parseIp } from "./ip.js";
import { closestName } from "./names.js";
import type { CompileContext } from "./context.js";
import { nameOf, spanOf } from "./context.js";
import { DEFAULTS } from "./defaults.js";
import { headerValueProblem, isHttpToken, isValidLabel, MAX_DURATION_TEXT, parseDurationMs, parseRfc3339Ms } from "./syntax.js";
import type { ListenAddress, SecretSource } from "./ir.js";

// Argument decoders. Each returns the decoded value, or undefined after reporting a diagnostic at
// the argument ("file:line:col: <directive>: expected …, got …").

/** The longest value a diagnostic quotes; past it the quote is cut (the position finds the rest). */
const MAX_QUOTED_CHARS = 200;

function got(arg: Arg): string {
  const chars = [...arg.value];
  if (chars.length <= MAX_QUOTED_CHARS) return JSON.stringify(arg.value);
  return `${JSON.stringify(chars.slice(0, MAX_QUOTED_CHARS).join(""))}… (${chars.length} characters)`;
}

/** Reports `arg` as not what was expected: `found` keeps its value, apart from what logs show. */
function reject(cx: CompileContext, arg: Arg, code: DiagnosticCode, expected: string, message: string, suggestion?: string): undefined {
  // A placeholder that could not be expanded has its own error: the rest of the value proves nothing.
  if (cx.unexpanded(arg)) return undefined;
  return cx.error(arg.span, code, expected, message, { found: arg.value, suggestion });
}

/** Argument count check; reports and returns false when the count is wrong. */
export function expectArgs(cx: CompileContext, d: Directive, min: number, max: number, usage: string): boolean {
  const count = d.args.length;
  if (count >= min && count <= max) return true;
  const expected = min === max ? `${min} argument${min === 1 ? "" : "s"}` : max === Infinity ? `at least ${min} argument${min === 1 ? "" : "s"}` : `${min} to ${max} arguments`;
  const at = count > max ? d.args[max].span : spanOf(d);
  cx.error(at, "wrong_arguments", `${expected} (${usage})`, `${nameOf(d)}: expected ${expected} (${usage}), got ${count}`, { found: String(count) });
  return false;
}

export function expectNoBlock(cx: CompileContext, d: Directive): boolean {
  if (!d.block) return true;
  cx.error(d.block.open, "unexpected_block", "no block", `${nameOf(d)} does not take a block`);
  return false;
}

/** `250ms 30s 5m 2h 1h30m 7d`; `off`/`0` when allowed. Returns null for off. */
export function decodeDuration(cx: CompileContext, arg: Arg, what: string, opts: { allowOff?: boolean; positive?: boolean } = {}): number | null | undefined {
  const text = cx.text(arg).trim();
  if (text === "off" || text === "0") {
    if (opts.positive && text === "0") return reject(cx, arg, "expected_duration", "a positive duration like 30s", `${what}: expected a positive duration like 30s, got ${got(arg)}`);
    if (text === "off") return opts.allowOff ? null : reject(cx, arg, "expected_duration", "a duration like 30s (off is not allowed here)", `${what}: expected a duration like 30s, got "off"`);
    return 0;
  }
  const ms = parseDurationMs(text);
  const expected = `a duration like 250ms, 30s, 5m, 2h or 7d (at most ${MAX_DURATION_TEXT})`;
  if (ms === undefined) return reject(cx, arg, "expected_duration", expected, `${what}: expected ${expected}, got ${got(arg)}`);
  if (opts.positive && ms <= 0) return reject(cx, arg, "expected_duration", "a positive duration", `${what}: expected a positive duration, got ${got(arg)}`);
  return ms;
}

/** `512`, `64kb`, `2mb`, `1gb` (powers of 1024); positive, at most 1024gb. */
export function decodeSize(cx: CompileContext, arg: Arg, what: string): number | undefined {
  const text = cx.text(arg).trim().toLowerCase();
  const m = /^(\d+)(b|k|kb|m|mb|g|gb)?$/.exec(text);
  if (!m) return reject(cx, arg, "expected_size", "a size like 512, 64kb, 2mb or 1gb", `${what}: expected a size like 512, 64kb, 2mb or 1gb, got ${got(arg)}`);
  const unit = m[2] ?? "b";
  const factor = unit.startsWith("g") ? 1024 ** 3 : unit.startsWith("m") ? 1024 ** 2 : unit.startsWith("k") ? 1024 : 1;
  const bytes = Number(m[1]) * factor;
  if (bytes <= 0) return reject(cx, arg, "expected_size", "a positive size", `${what}: expected a positive size, got ${got(arg)}`);
  if (bytes > DEFAULTS.maxSizeBytes) return reject(cx, arg, "expected_size", "a size of at most 1024gb", `${what}: ${got(arg)} is larger than the maximum 1024gb`);
  return bytes;
}

export function decodeBool(cx: CompileContext, arg: Arg, what: string): boolean | undefined {
  const text = cx.text(arg).trim().toLowerCase();
  if (text === "on" || text === "true" || text === "1") return true;
  if (text === "off" || text === "false" || text === "0") return false;
  return reject(cx, arg, "expected_bool", "on or off", `${what}: expected on or off, got ${got(arg)}`, closestName(text, ["on", "off", "true", "false"]));
}

export function decodeInt(cx: CompileContext, arg: Arg, what: string, min: number, max: number): number | undefined {
  const text = cx.text(arg).trim();
  if (!/^-?\d+$/.test(text)) return reject(cx, arg, "expected_number", `a whole number from ${min} to ${max}`, `${what}: expected a whole number, got ${got(arg)}`);
  const value = Number(text);
  if (value < min || value > max) return reject(cx, arg, "expected_number", `a number from ${min} to ${max}`, `${what}: expected a number from ${min} to ${max}, got ${text}`);
  return value;
}

export function decodeNumber(cx: CompileContext, arg: Arg, what: string, min: number, max: number): number | undefined {
  const text = cx.text(arg).trim();
  if (!/^-?\d+(?:\.\d+)?$/.test(text)) return reject(cx, arg, "expected_number", `a number from ${min} to ${max}`, `${what}: expected a number, got ${got(arg)}`);
  const value = Number(text);
  if (value < min || value > max) return reject(cx, arg, "expected_number", `a number from ${min} to ${max}`, `${what}: expected a number from ${min} to ${max}, got ${text}`);
  return value;
}

export function decodeOneOf<T extends string>(cx: CompileContext, arg: Arg, what: string, options: readonly T[]): T | undefined {
  const text = cx.text(arg).trim();
  if ((options as readonly string[]).includes(text)) return text as T;
  const suggestion = closestName(text, options);
  const hint = suggestion ? ` (did you mean "${suggestion}"?)` : "";
  return reject(cx, arg, "expected_enum", `one of ${options.join(", ")}`, `${what}: expected one of ${options.join(", ")}, got ${got(arg)}${hint}`, suggestion);
}

/** RFC 3339 timestamp → epoch ms. */
export function decodeTimestamp(cx: CompileContext, arg: Arg, what: string): number | undefined {
  const text = cx.text(arg).trim();
  const ms = parseRfc3339Ms(text);
  const expected = "an RFC 3339 timestamp like 2026-01-01T00:00:00Z (a calendar date, years 0000–9999 in UTC)";
  if (ms === undefined) return reject(cx, arg, "expected_timestamp", expected, `${what}: expected ${expected}, got ${got(arg)}`);
  return ms;
}

/** `env:NAME`, `file:PATH`, `raw:VALUE`, resolved through the context. */
export function decodeSecretSource(cx: CompileContext, arg: Arg, what: string): SecretSource | undefined {
  const text = cx.text(arg);
  const m = /^(env|file|raw):(.*)$/s.exec(text);
  // The value is not echoed: a bare word here is most likely the secret itself, written without raw:
  // (the diagnostic reaches stderr and the runtime log on reload).
  if (!m) return reject(cx, arg, "expected_secret_source", "a secret source env:NAME, file:PATH or raw:VALUE", `${what}: expected a secret source env:NAME, file:PATH or raw:VALUE, got a bare value (not shown)`);
  const kind = m[1] as SecretSource["kind"];
  const ref = m[2];
  const part = kind === "env" ? "variable name" : kind === "file" ? "path" : "value";
  if (ref === "") return reject(cx, arg, "expected_secret_source", `a ${part} after ${kind}:`, `${what}: ${kind}: needs a ${part}`);
  if (kind === "raw") return { kind, ref, value: ref };
  if (kind === "env") {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(ref)) return reject(cx, arg, "expected_secret_source", "env: and an environment variable name (letters, digits and _)", `${what}: ${JSON.stringify(ref.length > 64 ? `${ref.slice(0, 64)}…` : ref)} is not a valid environment variable name`);
    const value = cx.env[ref];
    if (value === undefined || value === "") cx.secretProblem(arg.span, "env_unset", `environment variable ${ref} to be set`, `${what}: environment variable ${ref} is not set`);
    return { kind, ref, value: value === undefined || value === "" ? null : value };
  }
  const read = cx.readFile(ref);
  const content = "text" in read ? read.text.trim() : undefined;
  if ("reason" in read) cx.secretProblem(arg.span, "file_unreadable", `a readable secret file ${ref} (${read.reason})`, `${what}: cannot read secret file "${ref}": ${read.reason}`);
  else if (content === "") cx.secretProblem(arg.span, "secret_empty", `a secret in the file ${ref}, which is empty`, `${what}: secret file "${ref}" is empty`);
  return { kind, ref, value: content ? content : null, path: cx.resolvePath(ref) };
}

/** `:8080`, `127.0.0.1:9443`, `[::1]:2019`, `localhost:9900`. */
export function decodeListen(cx: CompileContext, arg: Arg, what: string): ListenAddress | undefined {
  const text = cx.text(arg).trim();
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\[\]\s]*)):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  const expected = "a listen address like :8080, 127.0.0.1:9443 or [::1]:2019";
  if (!m || port > 65535) return reject(cx, arg, "expected_listen", expected, `${what}: expected ${expected}, got ${got(arg)}`);
  const host = m[1] ?? m[2];
  if (m[1] !== undefined && isIP(m[1]) !== 6) return reject(cx, arg, "expected_listen", `${expected}, with a valid IPv6 address in brackets`, `${what}: "${m[1]}" is not an IPv6 address`);
  // Digits and dots read as an IPv4 address, never as a host name to look up.
  if (/^[\d.]+$/.test(host) && isIP(host) !== 4) return reject(cx, arg, "expected_listen", `${expected}, with a valid IPv4 address`, `${what}: "${host}" is not an IPv4 address`);
  return { host, port, address: m[1] !== undefined ? `[${host}]:${port}` : `${host}:${port}` };
}

/** `localhost`, 127.0.0.0/8, ::1, or an IPv4-mapped 127.x address (`::ffff:127.0.0.1`, which parseIp reads as IPv4). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h === "localhost") return true;
  const ip = parseIp(h);
  if (!ip) return false;
  return ip.family === 4 ? ip.bytes[0] === 127 : ip.bytes.every((byte, i) => byte === (i === 15 ? 1 : 0));
}

/** http(s) URL with a host. */
/**
 * An http(s) URL with a host. Credentials in it (`user:pass@`) are refused unless `allowCredentials`:
 * a deliver or forward-auth request would not send them (the HTTP client drops them), and the URL is
 * the target's identity, shown in lists and logs.
 */
export function decodeHttpUrl(cx: CompileContext, arg: Arg, what: string, options: { allowCredentials?: boolean } = {}): string | undefined {
  const text = cx.text(arg).trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return reject(cx, arg, "expected_url", "an http(s) URL", `${what}: expected an http(s) URL, got ${got(arg)}`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname) {
    return reject(cx, arg, "expected_url", "an http(s) URL with a host", `${what}: expected an http(s) URL with a host, got ${got(arg)}`);
  }
  if (!options.allowCredentials && (url.username !== "" || url.password !== "")) {
    const hint = what === "deliver" ? '; give them as a header instead (header "Authorization" "Basic …")' : "";
    return reject(cx, arg, "expected_url", "a URL without user:password@ (give credentials as a header)", `${what}: the URL holds credentials (user:password@), which are not sent and would be shown wherever the URL is${hint}`);
  }
  return text;
}

/** An absolute URL path (route paths, prefixes, pull paths): cleaned, no trailing slash. */
export function decodePath(cx: CompileContext, arg: Arg, what: string, opts: { allowEmpty?: boolean } = {}): string | undefined {
  const text = cx.text(arg).trim();
  if (opts.allowEmpty && (text === "" || text === "/")) return "";
  if (!text.startsWith("/")) return reject(cx, arg, "expected_path", 'a path starting with "/"', `${what}: expected a path starting with "/", got ${got(arg)}`);
  if (/[\s?#]/.test(text)) return reject(cx, arg, "expected_path", 'a path without spaces, "?" or "#"', `${what}: a path may not contain spaces, "?" or "#", got ${got(arg)}`);
  return cleanPath(text);
}

/** Collapses `//`, resolves `.` and `..`, removes a trailing slash (`/` stays `/`). */
export function cleanPath(path: string): string {
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") out.pop();
    else out.push(segment);
  }
  return "/" + out.join("/");
}

export function decodeLabel(cx: CompileContext, arg: Arg, what: string): string | undefined {
  const text = cx.text(arg);
  if (isValidLabel(text)) return text;
  return reject(cx, arg, "expected_name", "a label of 1 to 128 characters: letters, digits, ., _, : and - (not first)", `${what}: ${got(arg)} must match ^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$ (1 to 128 characters, safe as a URL path segment)`);
}

export function decodeHeaderName(cx: CompileContext, arg: Arg, what: string): string | undefined {
  const text = cx.text(arg);
  if (isHttpToken(text)) return text;
  return reject(cx, arg, "expected_name", "an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)", `${what}: ${got(arg)} is not a valid HTTP header name`);
}

export function decodeHeaderValue(cx: CompileContext, arg: Arg, what: string): string | undefined {
  const text = cx.text(arg);
  const problem = headerValueProblem(text);
  if (problem === undefined) return text;
  if (problem === "control_character") return reject(cx, arg, "invalid_value", "a header value without CR, LF or NUL", `${what}: header value ${got(arg)} contains a control character (CR, LF or NUL are not allowed)`);
  return reject(cx, arg, "invalid_value", "a header value of Latin-1 characters", `${what}: header value ${got(arg)} has characters outside Latin-1, which an HTTP header cannot carry`);
}

/** An egress or remote_ip rule: a host name, `*.domain`, an IP or a CIDR. */
export function decodeHostRule(cx: CompileContext, arg: Arg, what: string, opts: { ipOnly?: boolean } = {}): string | undefined {
  const text = cx.text(arg).trim().toLowerCase();
  const slash = text.indexOf("/");
  if (slash >= 0) {
    const ip = text.slice(0, slash);
    const bits = text.slice(slash + 1);
    const family = isIP(ip);
    const max = family === 4 ? 32 : 128;
    if (family && /^\d{1,3}$/.test(bits) && Number(bits) <= max) return text;
    return reject(cx, arg, "invalid_value", "a CIDR like 10.0.0.0/8 or fd00::/8", `${what}: ${got(arg)} is not a valid CIDR like 10.0.0.0/8 or fd00::/8`);
  }
  if (isIP(text)) return text;
  if (opts.ipOnly) return reject(cx, arg, "invalid_value", "an IP address or CIDR", `${what}: expected an IP address or CIDR, got ${got(arg)}`);
  if (/^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(text) || text === "*") return text;
  return reject(cx, arg, "invalid_value", "a host name, *.domain, IP or CIDR", `${what}: expected a host name, *.domain, IP or CIDR, got ${got(arg)}`);
}

/** The single argument of a directive without a block, or undefined after reporting. */
export function singleArgOf(cx: CompileContext, d: Directive, usage: string): Arg | undefined {
  if (!expectArgs(cx, d, 1, 1, usage) || !expectNoBlock(cx, d)) return undefined;
  return d.args[0];
}
