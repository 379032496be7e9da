// `match { … }` criteria of a route (docs/spoolfile.md "Routes"): host, header, header_exists,
// query, query_exists and remote_ip, all ANDed. The method criterion is not here: a wrong method on
// a matched path is a 405 with Allow, not a non-match (docs/decisions.md D12).
import { BlockList, isIP } from "node:net";
import type { MatchCriteria } from "../../compiler/ir.js";

/** What the criteria look at, as plain values. */
export interface MatchSubject {
  /** Host header without the port, lower-cased. */
  host: string;
  /** Node's lower-cased header map. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  query: URLSearchParams;
  remoteAddress: string;
}

export type CompiledMatcher = (subject: MatchSubject) => boolean;

const matchers = new WeakMap<MatchCriteria, CompiledMatcher>();

/** The criteria as one predicate; compiled once per IR object (a reload brings new objects). */
export function compileMatcher(criteria: MatchCriteria): CompiledMatcher {
  const cached = matchers.get(criteria);
  if (cached) return cached;
  const checks: CompiledMatcher[] = [];
  if (criteria.hosts.length > 0) {
    const hosts = criteria.hosts.map((h) => h.toLowerCase());
    checks.push((s) => hosts.some((pattern) => hostMatches(pattern, s.host)));
  }
  for (const { name, value } of criteria.headers) {
    const lower = name.toLowerCase();
    checks.push((s) => headerValues(s.headers[lower]).includes(value));
  }
  for (const name of criteria.headersExist) {
    const lower = name.toLowerCase();
    checks.push((s) => s.headers[lower] !== undefined);
  }
  for (const { name, value } of criteria.query) checks.push((s) => s.query.getAll(name).includes(value));
  for (const name of criteria.queryExist) checks.push((s) => s.query.has(name));
  if (criteria.remoteIps.length > 0) {
    const allowed = buildBlockList(criteria.remoteIps);
    checks.push((s) => addressIn(allowed, s.remoteAddress));
  }
  const matcher: CompiledMatcher = (subject) => checks.every((check) => check(subject));
  matchers.set(criteria, matcher);
  return matcher;
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern === "*") return true;
  if (pattern.startsWith("*.")) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return pattern === host;
}

function headerValues(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function buildBlockList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const slash = entry.indexOf("/");
    const address = slash < 0 ? entry : entry.slice(0, slash);
    const family = isIP(address) === 6 ? "ipv6" : "ipv4";
    if (slash < 0) list.addAddress(address, family);
    else list.addSubnet(address, Number(entry.slice(slash + 1)), family);
  }
  return list;
}

function addressIn(list: BlockList, remote: string): boolean {
  // An IPv4 client on a dual-stack socket shows up as ::ffff:a.b.c.d.
  const address = remote.startsWith("::ffff:") && isIP(remote.slice(7)) === 4 ? remote.slice(7) : remote;
  const family = isIP(address);
  if (family === 0) return false;
  return list.check(address, family === 6 ? "ipv6" : "ipv4");
}

/** Host header without port, lower-cased ("Example.com:8080" → "example.com", "[::1]:80" → "::1"). */
export function requestHost(hostHeader: string | undefined): string {
  if (!hostHeader) return "";
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith("[")) {
    const close = host.indexOf("]");
    return close < 0 ? host : host.slice(1, close);
  }
  const colon = host.lastIndexOf(":");
  return colon < 0 ? host : host.slice(0, colon);
}
