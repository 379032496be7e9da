// Egress policy for push delivery (docs/decisions.md D36; docs/delivery.md "Egress policy").
// The decision is a pure function of (policy, host, resolved addresses) in compiler/egress.ts; the undici Agent built here
// applies it at connect time to the very addresses the socket connects to, so a name that resolves
// to a public address when checked and to 127.0.0.1 when connecting (DNS rebinding) is still refused.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { Agent, buildConnector } from "undici";
import type { EgressPolicy } from "../../compiler/ir.js";
import {
  checkEgressAddresses,
  checkEgressUrl,
  compileEgressPolicy,
  normalizeHost,
  parseEgressRule,
  type CompiledEgressPolicy,
  type EgressDecision,
  type EgressRefusal,
  type EgressRule,
} from "../../compiler/egress.js";
import { parseIp, type IpAddress } from "../../compiler/ip.js";

/**
 * The IR's policy (compiler/ir.ts; defaults in compiler/defaults.ts): allow/deny rules are host names,
 * `*.example.com` wildcards, IPs or CIDRs; a non-empty allow list admits only what it names; deny wins.
 * The decision itself is the compiler's (compiler/egress.ts), so `config validate` and delivery agree.
 */
export type { EgressPolicy };
export { checkEgressAddresses, checkEgressUrl, compileEgressPolicy, normalizeHost, parseEgressRule };
export type { CompiledEgressPolicy, EgressDecision, EgressRefusal, EgressRule };

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
