// Query-string and body value rules shared by every Admin endpoint (webhook-queue.md "Queue reads",
// "Backlog analytics", clarification 36): one place decides what a valid route, limit, state or
// RFC 3339 instant is, so reads and mutations agree.
import { apiError, type ErrorCode } from "../errors.js";
import { MAX_DURATION_TEXT, parseDurationMs } from "../../compiler/index.js";
import { MAX_LIST_LIMIT, MESSAGE_STATES, type MessageState } from "../store/store.js";

export const DEFAULT_LIST_LIMIT = 100;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** Date.UTC without its mapping of years 0–99 to 1900–1999 (`0000-01-01` is year 0, not 1900). */
function utcMs(year: number, monthIndex: number, day: number, hour = 0, minute = 0, second = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

/** Epoch ms of an RFC 3339 timestamp, or undefined when the text is not one (calendar-checked). */
export function parseRfc3339Ms(text: string): number | undefined {
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
  const fractionMs = m[7] ? Math.floor(Number(`0${m[7]}`) * 1000) : 0;
  const epochMs = utcMs(year, month - 1, day, hour, minute, Math.min(second, 59)) + fractionMs - offsetMin * 60_000;
  // An offset can carry a written year 0000 or 9999 past the years RFC 3339 can write in UTC, the
  // form every answer uses: such an instant could never be printed back or asked about.
  return epochMs >= FIRST_RFC3339_MS && epochMs <= LAST_RFC3339_MS ? epochMs : undefined;
}

/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z, the range of 4-digit-year UTC instants. */
const FIRST_RFC3339_MS = utcMs(0, 0, 1);
const LAST_RFC3339_MS = utcMs(10000, 0, 1) - 1;

export function formatRfc3339(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

export function isRoutePath(text: string): boolean {
  return text.startsWith("/");
}

/**
 * A strict reader over a URL query: only `allowed` names may appear, each at most once, and every
 * accessor validates its value. Unknown names are refused rather than ignored, so a typo such as
 * `limt=5` cannot silently widen an operator's view.
 */
export class QueryReader {
  constructor(
    private readonly params: URLSearchParams,
    allowed: readonly string[],
    /** Names refused with 400 selector_scope_forbidden and the given detail (endpoint-scoped paths reject selector fields). */
    forbidden: Readonly<Record<string, string>> = {},
  ) {
    const seen = new Set<string>();
    for (const name of params.keys()) {
      if (Object.hasOwn(forbidden, name)) throw apiError("selector_scope_forbidden", forbidden[name]);
      if (!allowed.includes(name)) throw invalidQuery(`unknown query parameter ${JSON.stringify(name)}`);
      if (seen.has(name)) throw invalidQuery(`query parameter ${JSON.stringify(name)} given more than once`);
      seen.add(name);
    }
  }

  string(name: string): string | undefined {
    const value = this.params.get(name);
    if (value === null) return undefined;
    if (value === "") throw invalidQuery(`${name} must not be empty`);
    return value;
  }

  route(name = "route"): string | undefined {
    const value = this.string(name);
    if (value !== undefined && !isRoutePath(value)) throw invalidQuery(`${name} must start with "/", got ${JSON.stringify(value)}`);
    return value;
  }

  limit(): number {
    const value = this.params.get("limit");
    if (value === null) return DEFAULT_LIST_LIMIT;
    const limit = /^\d{1,7}$/.test(value) ? Number(value) : NaN;
    if (!(limit >= 1 && limit <= MAX_LIST_LIMIT)) throw invalidQuery(`limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${JSON.stringify(value)}`);
    return limit;
  }

  instant(name: string): number | undefined {
    const value = this.params.get(name);
    if (value === null) return undefined;
    const ms = parseRfc3339Ms(value);
    if (ms === undefined) throw invalidQuery(`${name} must be an RFC 3339 timestamp, got ${JSON.stringify(value)}`);
    return ms;
  }

  flag(name: string): boolean {
    const value = this.params.get(name);
    if (value === null) return false;
    const lowered = value.toLowerCase();
    if (["", "1", "true", "on", "yes"].includes(lowered)) return true;
    if (["0", "false", "off", "no"].includes(lowered)) return false;
    throw invalidQuery(`${name} must be true or false, got ${JSON.stringify(value)}`);
  }

  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
    const value = this.params.get(name);
    if (value === null) return undefined;
    if (!(values as readonly string[]).includes(value)) throw invalidQuery(`${name} must be one of ${values.join(", ")}, got ${JSON.stringify(value)}`);
    return value as T;
  }

  state(): MessageState | undefined {
    return this.oneOf("state", MESSAGE_STATES);
  }

  durationMs(name: string): number | undefined {
    const value = this.params.get(name);
    if (value === null) return undefined;
    const ms = parseDurationMs(value);
    if (ms === undefined) throw invalidQuery(`${name} must be a duration such as 5m or 1h (at most ${MAX_DURATION_TEXT}), got ${JSON.stringify(value)}`);
    return ms;
  }
}

export function invalidQuery(detail: string) {
  return apiError("invalid_query", detail);
}

export function invalidBody(detail: string, code: ErrorCode = "invalid_body") {
  return apiError(code, detail);
}
