// Egress policy for push delivery (DECISIONS "Push and exec"; reference-behaviour §1.3 defaults.egress).
// The decision is a pure function of (policy, host, resolved addresses); the undici Agent built here
// applies it at connect time to the very addresses the socket connects to, so a name that resolves
// to a public address when checked and to 127.0.0.1 when connecting (DNS rebinding) is still refused.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { Agent, buildConnector } from "undici";
import type { EgressPolicy } from "../../compiler/ir.js";
import { cidrContains, classifyIp, formatIp, parseCidr, parseIp, type Cidr, type IpAddress } from "./ip.js";

/**
 * The IR's policy (compiler/ir.ts; defaults in compiler/defaults.ts): allow/deny rules are host names,
 * `*.example.com` wildcards, IPs or CIDRs; a non-empty allow list admits only what it names; deny wins.
 */
export type { EgressPolicy };

export type EgressRule = { kind: "host"; host: string; subdomains: boolean } | { kind: "cidr"; cidr: Cidr };

export interface CompiledEgressPolicy extends EgressPolicy {
  readonly allowRules: readonly EgressRule[];
  readonly denyRules: readonly EgressRule[];
}

export type EgressDecision = { allowed: true } | { allowed: false; reason: string };

/** Raised (at connect time, or before a request) when the policy refuses a target. */
export class EgressDeniedError extends Error {
  readonly code = "SPOOL_EGRESS_DENIED";
  constructor(reason: string) {
    super(`egress denied: ${reason}`);
    this.name = "EgressDeniedError";
  }
}

export function isEgressDenied(error: unknown): error is EgressDeniedError {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof EgressDeniedError || (e as { code?: unknown }).code === "SPOOL_EGRESS_DENIED") return true;
  }
  return false;
}

/** Parses one rule; throws on a malformed one (the compiler should have rejected it already). */
export function parseEgressRule(text: string): EgressRule {
  const value = text.trim().toLowerCase();
  const cidr = parseCidr(value);
  if (cidr) return { kind: "cidr", cidr };
  if (value.startsWith("*.")) return { kind: "host", host: normalizeHost(value.slice(2)), subdomains: true };
  if (value === "*") return { kind: "host", host: "*", subdomains: false };
  if (!/^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?\.?$/.test(value)) throw new Error(`invalid egress rule "${text}"`);
  return { kind: "host", host: normalizeHost(value), subdomains: false };
}

export function compileEgressPolicy(policy: EgressPolicy): CompiledEgressPolicy {
  return {
    ...policy,
    allowRules: policy.allow.map(parseEgressRule),
    denyRules: policy.deny.map(parseEgressRule),
  };
}

/** Lower-cased, without brackets or a trailing dot: the form rules are compared against. */
export function normalizeHost(host: string): string {
  let value = host.trim().toLowerCase();
  if (value.startsWith("[") && value.endsWith("]")) value = value.slice(1, -1);
  if (value.endsWith(".")) value = value.slice(0, -1);
  return value;
}

/**
 * The URL-level part of the policy: scheme, https_only, and for an IP-literal host the address rules.
 * A host name's addresses are checked when connecting (checkEgressAddresses via the Agent).
 */
export function checkEgressUrl(policy: CompiledEgressPolicy, url: string): EgressDecision {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { allowed: false, reason: `invalid url ${JSON.stringify(url)}` };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return { allowed: false, reason: `scheme ${parsed.protocol} is not allowed` };
  }
  if (policy.httpsOnly && parsed.protocol !== "https:") return { allowed: false, reason: "https_only is on" };
  const host = normalizeHost(parsed.hostname);
  if (host === "") return { allowed: false, reason: "empty host" };
  const literal = parseIp(host);
  if (literal) return checkEgressAddresses(policy, host, [literal]);
  // Host-name deny rules can be decided now; everything address-related waits for the connect.
  if (policy.denyRules.some((rule) => matchesHost(rule, host))) return { allowed: false, reason: `host ${host} is denied` };
  return { allowed: true };
}

/**
 * The full decision for `host` resolving to `addresses` (at least one). Deny wins; an allow host rule
 * naming the host admits it however it resolves (`*` names no host); allow CIDR rules must cover
 * every address; with rebind protection a non-public address is refused unless an allow rule names
 * the host or covers the address.
 */
export function checkEgressAddresses(policy: CompiledEgressPolicy, host: string, addresses: readonly IpAddress[]): EgressDecision {
  const name = normalizeHost(host);
  if (addresses.length === 0) return { allowed: false, reason: `host ${name} resolved to no addresses` };
  if (policy.denyRules.some((rule) => matchesHost(rule, name))) return { allowed: false, reason: `host ${name} is denied` };
  for (const address of addresses) {
    if (policy.denyRules.some((rule) => matchesAddress(rule, address))) {
      return { allowed: false, reason: `address ${formatIp(address)} of ${name} is denied` };
    }
  }
  // `*` lets every host name through the allow list but names none: rebind protection still decides
  // its addresses. A rule naming the host (exactly, or as a subdomain) admits it however it resolves.
  const allowingRules = policy.allowRules.filter((rule) => matchesHost(rule, name));
  if (allowingRules.some((rule) => !isAnyHost(rule))) return { allowed: true };
  const inAllowedCidr = (address: IpAddress) => policy.allowRules.some((rule) => matchesAddress(rule, address));
  if (policy.allowRules.length > 0 && allowingRules.length === 0 && !addresses.every(inAllowedCidr)) {
    // Every address, not just one: the socket may pick any of them (reference-behaviour §5 note on CIDR allow).
    return { allowed: false, reason: `host ${name} is not in the egress allow list` };
  }
  if (policy.dnsRebindProtection) {
    for (const address of addresses) {
      const kind = classifyIp(address);
      if (kind !== "public" && !inAllowedCidr(address)) {
        return { allowed: false, reason: `address ${formatIp(address)} of ${name} is ${kind}` };
      }
    }
  }
  return { allowed: true };
}

function isAnyHost(rule: EgressRule): boolean {
  return rule.kind === "host" && rule.host === "*";
}

function matchesHost(rule: EgressRule, host: string): boolean {
  if (rule.kind !== "host") return false;
  if (isAnyHost(rule)) return true;
  // `*.example.com` names the subdomains, not example.com itself.
  return rule.subdomains ? host.endsWith(`.${rule.host}`) : host === rule.host;
}

function matchesAddress(rule: EgressRule, address: IpAddress): boolean {
  return rule.kind === "cidr" && cidrContains(rule.cidr, address);
}

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to every address it has; injectable so tests can make a name resolve to 127.0.0.1. */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolveHost: ResolveHost = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses: LookupAddress[]) => {
      if (error) reject(error);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

export interface EgressAgentOptions {
  readonly resolveHost?: ResolveHost;
  /** Passed to the undici Agent (connections, keep-alive, pipelining). */
  readonly agentOptions?: Omit<Agent.Options, "connect">;
  /** TCP/TLS connect timeout; undici's default is 10 s. */
  readonly connectTimeoutMs?: number;
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * An undici Agent that refuses, at connect time, any connection the policy does not allow.
 * The check runs in the socket's `lookup`, on the exact addresses handed to connect(); IP-literal
 * hosts (which skip lookup) are checked before the connect starts.
 */
export function createEgressAgent(policy: EgressPolicy, options: EgressAgentOptions = {}): Agent {
  const compiled = compileEgressPolicy(policy);
  const resolveHost = options.resolveHost ?? systemResolveHost;

  const lookup = (hostname: string, lookupOptions: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    resolveHost(hostname).then(
      (resolved) => {
        const wanted = lookupOptions.family === 4 || lookupOptions.family === 6 ? resolved.filter((a) => a.family === lookupOptions.family) : resolved;
        const parsed = wanted.map((a) => parseIp(a.address));
        if (parsed.some((p) => p === undefined)) {
          callback(new EgressDeniedError(`host ${hostname} resolved to an unparsable address`), []);
          return;
        }
        const decision = checkEgressAddresses(compiled, hostname, parsed as IpAddress[]);
        if (!decision.allowed) {
          callback(new EgressDeniedError(decision.reason), []);
          return;
        }
        if (lookupOptions.all) callback(null, wanted.map((a) => ({ address: a.address, family: a.family })));
        else callback(null, wanted[0].address, wanted[0].family);
      },
      (error: Error) => callback(error, []),
    );
  };

  const connectBase = buildConnector({ lookup, ...(options.connectTimeoutMs ? { timeout: options.connectTimeoutMs } : {}) } as buildConnector.BuildOptions);
  const connect: buildConnector.connector = (connectOptions, callback) => {
    const protocol = connectOptions.protocol;
    if (compiled.httpsOnly && protocol !== "https:") {
      callback(new EgressDeniedError("https_only is on"), null);
      return;
    }
    const literal = parseIp(connectOptions.hostname);
    if (literal) {
      const decision = checkEgressAddresses(compiled, connectOptions.hostname, [literal]);
      if (!decision.allowed) {
        callback(new EgressDeniedError(decision.reason), null);
        return;
      }
    }
    connectBase(connectOptions, callback);
  };
  return new Agent({ ...options.agentOptions, connect });
}
