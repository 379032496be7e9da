// Query-string and body value rules shared by every Admin endpoint (docs/api.md
// "Admin API"): one place decides what a valid route, limit, state or
// RFC 3339 instant is, so reads and mutations agree.
import { apiError, type ErrorCode } from "../errors.js";
import { MAX_DURATION_TEXT, parseDurationMs, parseRfc3339Ms } from "../../compiler/index.js";
import { MESSAGE_STATES, type MessageState } from "../store/records.js";
import { MAX_LIST_LIMIT } from "../store/store.js";

export const DEFAULT_LIST_LIMIT = 100;

/** The instant rule is the one the Spoolfile uses too (compiler/syntax.ts). */
export { parseRfc3339Ms };

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

  /** `round: "up"` for an exclusive upper bound such as `before` (parseRfc3339Ms). */
  instant(name: string, round: "down" | "up" = "down"): number | undefined {
    const value = this.params.get(name);
    if (value === null) return undefined;
    const ms = parseRfc3339Ms(value, round);
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

/**
 * For endpoints that take no query parameters (mutations take everything from the body, the
 * management model reads nothing): any parameter is a client mistake worth naming (400 invalid_query).
 */
export function refuseQuery(request: { readonly query: URLSearchParams }): void {
  new QueryReader(request.query, []);
}
