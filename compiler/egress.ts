// The egress policy's decision for push delivery (docs/decisions.md D36;
// docs/delivery.md "Egress policy"), pure: a function of (policy, url) or (policy, host, addresses). The runtime
// applies it at connect time to the addresses a socket connects to (runtime/delivery/egress.ts); the
// compiler applies it to a deliver target whose scheme and literal address already decide it.
import { cidrContains, classifyIp, embeddedIpv4, formatIp, parseCidr, parseIp, type AddressClass, type Cidr, type IpAddress } from "./ip.js";
import type { EgressPolicy } from "./ir.js";

/** A rule as parsed, with its text as written (for messages naming it). */
export type EgressRule = ({ kind: "host"; host: string; subdomains: boolean } | { kind: "cidr"; cidr: Cidr }) & { readonly text: string };

export interface CompiledEgressPolicy extends EgressPolicy {
  readonly allowRules: readonly EgressRule[];
  readonly denyRules: readonly EgressRule[];
}

/** Why the policy refuses a target, as data: the runtime logs `reason`, the compiler names the setting to change. */
export type EgressRefusal =
  | { readonly kind: "invalid_url" }
  | { readonly kind: "scheme"; readonly scheme: string }
  | { readonly kind: "https_only" }
  | { readonly kind: "empty_host" }
  | { readonly kind: "no_addresses"; readonly host: string }
  | { readonly kind: "denied_host"; readonly host: string; readonly rule: string }
  | { readonly kind: "denied_address"; readonly host: string; readonly address: string; readonly rule: string }
  | { readonly kind: "not_allowed"; readonly host: string }
  | { readonly kind: "non_public"; readonly host: string; readonly address: string; readonly addressClass: AddressClass };

export type EgressDecision = { allowed: true } | { allowed: false; reason: string; refusal: EgressRefusal };

const ALLOWED: EgressDecision = { allowed: true };

function refused(refusal: EgressRefusal, reason: string): EgressDecision {
  return { allowed: false, reason, refusal };
}

/** Parses one rule; throws on a malformed one (the compiler has rejected those already). */
export function parseEgressRule(text: string): EgressRule {
  const value = text.trim().toLowerCase();
  const cidr = parseCidr(value);
  if (cidr) return { kind: "cidr", cidr, text };
  if (value.startsWith("*.")) return { kind: "host", host: normalizeHost(value.slice(2)), subdomains: true, text };
  if (value === "*") return { kind: "host", host: "*", subdomains: false, text };
  if (!/^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?\.?$/.test(value)) throw new Error(`invalid egress rule "${text}"`);
  return { kind: "host", host: normalizeHost(value), subdomains: false, text };
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
 * A host name's addresses are checked when connecting (checkEgressAddresses via the runtime's Agent).
 */
export function checkEgressUrl(policy: CompiledEgressPolicy, url: string): EgressDecision {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refused({ kind: "invalid_url" }, `invalid url ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return refused({ kind: "scheme", scheme: parsed.protocol }, `scheme ${parsed.protocol} is not allowed`);
  }
  if (policy.httpsOnly && parsed.protocol !== "https:") return refused({ kind: "https_only" }, "https_only is on");
  const host = normalizeHost(parsed.hostname);
  if (host === "") return refused({ kind: "empty_host" }, "empty host");
  const literal = parseIp(host);
  if (literal) return checkEgressAddresses(policy, host, [literal]);
  // Host-name deny rules can be decided now; everything address-related waits for the connect.
  const denying = policy.denyRules.find((rule) => matchesHost(rule, host));
  if (denying) return refused({ kind: "denied_host", host, rule: denying.text }, `host ${host} is denied`);
  return ALLOWED;
}

/**
 * The full decision for `host` resolving to `addresses` (at least one). Deny wins; an allow host rule
 * naming the host admits it however it resolves (`*` names no host); allow CIDR rules must cover
 * every address; with rebind protection a non-public address is refused unless an allow rule names
 * the host or covers the address.
 */
export function checkEgressAddresses(policy: CompiledEgressPolicy, host: string, addresses: readonly IpAddress[]): EgressDecision {
  const name = normalizeHost(host);
  if (addresses.length === 0) return refused({ kind: "no_addresses", host: name }, `host ${name} resolved to no addresses`);
  const denyingHost = policy.denyRules.find((rule) => matchesHost(rule, name));
  if (denyingHost) return refused({ kind: "denied_host", host: name, rule: denyingHost.text }, `host ${name} is denied`);
  for (const address of addresses) {
    const denying = policy.denyRules.find((rule) => matchesAddress(rule, address));
    if (denying) {
      return refused({ kind: "denied_address", host: name, address: formatIp(address), rule: denying.text }, `address ${formatIp(address)} of ${name} is denied`);
    }
  }
  // `*` lets every host name through the allow list but names none: rebind protection still decides
  // its addresses. A rule naming the host (exactly, or as a subdomain) admits it however it resolves.
  const allowingRules = policy.allowRules.filter((rule) => matchesHost(rule, name));
  if (allowingRules.some((rule) => !isAnyHost(rule))) return ALLOWED;
  const inAllowedCidr = (address: IpAddress) => policy.allowRules.some((rule) => matchesAddress(rule, address));
  if (policy.allowRules.length > 0 && allowingRules.length === 0 && !addresses.every(inAllowedCidr)) {
    // Every address, not just one: the socket may pick any of them (docs/decisions.md D36).
    return refused({ kind: "not_allowed", host: name }, `host ${name} is not in the egress allow list`);
  }
  if (policy.dnsRebindProtection) {
    for (const address of addresses) {
      const addressClass = classifyIp(address);
      if (addressClass !== "public" && !inAllowedCidr(address)) {
        return refused({ kind: "non_public", host: name, address: formatIp(address), addressClass }, `address ${formatIp(address)} of ${name} is ${addressClass}`);
      }
    }
  }
  return ALLOWED;
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

/** A NAT64/SIIT address is also judged by the IPv4 address it carries (docs/delivery.md "Egress policy"). */
function matchesAddress(rule: EgressRule, address: IpAddress): boolean {
  if (rule.kind !== "cidr") return false;
  const carried = embeddedIpv4(address);
  return cidrContains(rule.cidr, address) || (carried !== undefined && cidrContains(rule.cidr, carried));
}
