// A deliver target the egress policy refuses whatever DNS answers is a config error, not a message
// that goes dead with policy_denied at its first attempt (an operator validating the file should
// learn it there, not from the DLQ; docs/delivery.md "Egress policy"): an http:// URL under https_only, a literal
// address a deny rule, the allow list or rebind protection refuses, a host a deny rule names. What
// only a placeholder's value or a name's resolution decides (`{env.X}`, `localhost`,
// `hooks.example.com`) is still decided at delivery time.
import type { Arg } from "../../grammar/index.js";
import type { CompileContext } from "../context.js";
import { checkEgressUrl, compileEgressPolicy, type CompiledEgressPolicy, type EgressRefusal } from "../egress.js";
import type { EgressPolicy } from "../ir.js";
import { redactUrl } from "../url-redact.js";

const EGRESS_BLOCK = "defaults { egress { … } }";

/** Reports `url` (the expanded `deliver` argument `arg`) when the policy can only refuse it. */
export function checkDeliverEgress(cx: CompileContext, arg: Arg, url: string, routePath: string, policy: EgressPolicy): void {
  // Settings that did not compile cleanly already have their error; judging targets by them would
  // add one per target (docs/delivery.md "Egress policy").
  if (cx.isBroken("block", "defaults") || cx.isBroken("block", "defaults › egress")) return;
  const written = writtenLiterally(arg.value);
  if (!written.scheme) return;
  const refusals = certainRefusals(compiledOnce(policy), url, written.host);
  if (refusals.length === 0) return;
  // Shown as written: placeholders unexpanded, query values redacted (they carry credentials).
  const shown = redactUrl(arg.value.trim());
  cx.error(
    arg.span,
    "egress_denied_target",
    refusals.map(expectedOf).join("; and "),
    `deliver: the egress policy refuses ${shown} (route ${routePath}): ${refusals.map(remedy).join("; and ")}`,
    { found: shown },
  );
}

const compiledPolicies = new WeakMap<EgressPolicy, CompiledEgressPolicy>();

/** Every target of a file meets the same policy: its rules are parsed once. */
function compiledOnce(policy: EgressPolicy): CompiledEgressPolicy {
  let compiled = compiledPolicies.get(policy);
  if (!compiled) compiledPolicies.set(policy, (compiled = compileEgressPolicy(policy)));
  return compiled;
}

/**
 * Whether the scheme, and the host, are written in the argument rather than coming through a
 * placeholder. A placeholder in the port or path decides nothing the policy looks at.
 */
function writtenLiterally(raw: string): { scheme: boolean; host: boolean } {
  const m = /^\s*([^:/?#{]+):\/\/([^/?#]*)/.exec(raw);
  if (!m) return { scheme: false, host: false };
  const hostPort = m[2].slice(m[2].lastIndexOf("@") + 1);
  const host = hostPort.startsWith("[") ? hostPort.slice(0, hostPort.indexOf("]") + 1) : hostPort.replace(/:[^:]*$/, "");
  return { scheme: true, host: host !== "" && !host.includes("{") };
}

/**
 * Every refusal that holds whatever the host resolves to: https_only first, then (as if https_only
 * were off, so one validation names everything to change) what the host or its literal address meets.
 */
function certainRefusals(policy: CompiledEgressPolicy, url: string, hostWritten: boolean): EgressRefusal[] {
  const refusals: EgressRefusal[] = [];
  if (policy.httpsOnly && new URL(url).protocol === "http:") refusals.push({ kind: "https_only" });
  if (!hostWritten) return refusals;
  const decision = checkEgressUrl({ ...policy, httpsOnly: false }, url);
  if (!decision.allowed) refusals.push(decision.refusal);
  return refusals;
}

/** What the policy admits, in the compiler's words only (log lines show this, never the target). */
function expectedOf(refusal: EgressRefusal): string {
  switch (refusal.kind) {
    case "https_only":
      return "an https:// target while egress https_only is on (or https_only off)";
    case "denied_host":
    case "denied_address":
      return "a target no egress deny rule covers";
    case "not_allowed":
      return "a target in the egress allow list";
    case "non_public":
      return "a public address while egress dns_rebind_protection is on (or an allow rule naming it)";
    default:
      return "a target the egress policy admits";
  }
}

/** The refusal and the setting that would allow the target. */
function remedy(refusal: EgressRefusal): string {
  switch (refusal.kind) {
    case "https_only":
      return "https_only is on; set defaults { egress { https_only off } } (or use https://)";
    case "denied_host":
      return `deny "${refusal.rule}" names ${refusal.host}; remove that rule from ${EGRESS_BLOCK}`;
    case "denied_address":
      return `deny "${refusal.rule}" covers ${refusal.address}; remove that rule from ${EGRESS_BLOCK}`;
    case "not_allowed":
      return `${refusal.host} is not in the egress allow list; add allow "${refusal.host}" to ${EGRESS_BLOCK}`;
    case "non_public":
      return (
        `${refusal.address} is a ${refusal.addressClass.replace("_", "-")} address and dns_rebind_protection is on; ` +
        `add allow "${refusal.address}" to ${EGRESS_BLOCK} (an allow list then admits only what it names) or set dns_rebind_protection off`
      );
    default:
      return refusal.kind.replace("_", " ");
  }
}
