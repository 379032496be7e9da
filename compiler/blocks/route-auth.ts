import { formatSpan, type Directive } from "../../grammar/index.js";
import { readBlock, scalar } from "../block-reader.js";
import { spanOf, type CompileContext } from "../context.js";
import { DEFAULTS } from "../defaults.js";
import type { HmacProvider, NamedSecret, RotatingSecret, RouteAuth, SecretSource } from "../ir.js";
import { decodeHeaderName, decodeHttpUrl, decodeOneOf, decodeSecretSource, expectArgs, singleArgOf } from "../values.js";
import { checkStandardWebhooksKeys, plainSecret, resolveSecretRefs } from "./secrets.js";
import { HMAC_PROVIDERS } from "../reference.js";

const PROVIDERS = HMAC_PROVIDERS;

/** Accumulates a route's `auth …` statements, then checks the combination rules. */
export class RouteAuthBuilder {
  private readonly tokens: SecretSource[] = [];
  private readonly users: { username: string; password: string }[] = [];
  private hmac: RouteAuth | null = null;
  private forward: RouteAuth | null = null;
  private readonly firstOf = new Map<string, Directive>();

  constructor(private readonly cx: CompileContext, private readonly secrets: readonly NamedSecret[]) {}

  add(d: Directive): void {
    const cx = this.cx;
    const kindArg = d.args[0];
    if (!kindArg) {
      cx.error(spanOf(d), "wrong_arguments", "auth token|basic|hmac|forward …", "auth: expected auth token|basic|hmac|forward …");
      return;
    }
    const kind = decodeOneOf(cx, kindArg, "auth", ["token", "basic", "hmac", "forward"] as const);
    if (!kind) return;
    const first = this.firstOf.get(kind);
    if (first && (kind === "hmac" || kind === "forward")) {
      cx.error(spanOf(d), "duplicate_directive", `auth ${kind} at most once per route (first at ${formatSpan(spanOf(first))})`, `duplicate directive "auth ${kind}" in route (first at ${formatSpan(spanOf(first))})`);
      return;
    }
    if (!first) this.firstOf.set(kind, d);
    // The kind is part of the subject: `route /x › auth › hmac › provider`.
    cx.within(kind, () => {
      if (kind === "token") this.addToken(d);
      else if (kind === "basic") this.addBasic(d);
      else if (kind === "hmac") this.hmac = this.compileHmac(d) ?? null;
      else this.forward = this.compileForward(d) ?? null;
    });
  }

  private addToken(d: Directive): void {
    if (!expectArgs(this.cx, d, 2, 2, "auth token <source>")) return;
    const source = decodeSecretSource(this.cx, d.args[1], "auth token");
    if (source) this.tokens.push(source);
  }

  // auth basic "user" "pass": literal values; refs are rejected so a typo cannot become a password.
  private addBasic(d: Directive): void {
    if (!expectArgs(this.cx, d, 3, 3, 'auth basic "user" "pass"')) return;
    for (const a of d.args.slice(1)) {
      if (/^(env|file|raw|vault):/.test(a.value)) {
        this.cx.error(a.span, "invalid_value", "literal values, or placeholders such as {env.NAME}, not a secret source", `auth basic takes literal values; ${JSON.stringify(a.value)} looks like a secret source: use a placeholder such as {env.NAME}`, { found: a.value });
        return;
      }
    }
    this.users.push({ username: this.cx.text(d.args[1]), password: this.cx.text(d.args[2]) });
  }

  // auth hmac <source> | auth hmac secret_ref "ID"… | auth hmac { provider P; secret <source>…;
  //   secret_ref "ID"…; signature_header; timestamp_header; nonce_header; tolerance }
  private compileHmac(d: Directive): RouteAuth | undefined {
    const cx = this.cx;
    const generic = {
      secrets: [] as RotatingSecret[],
      runtimePools: [] as string[],
      signatureHeader: DEFAULTS.hmacSignatureHeader as string,
      timestampHeader: DEFAULTS.hmacTimestampHeader as string,
      nonceHeader: DEFAULTS.hmacNonceHeader as string,
      toleranceMs: DEFAULTS.hmacToleranceMs as number,
    };
    if (!d.block) {
      if (d.args.length >= 2 && cx.text(d.args[1]) === "secret_ref") {
        generic.secrets = resolveSecretRefs(cx, d, 2, this.secrets, "auth hmac", generic.runtimePools);
      } else {
        if (!expectArgs(cx, d, 2, 2, "auth hmac <source> | auth hmac secret_ref \"ID\" | auth hmac { … }")) return undefined;
        const source = decodeSecretSource(cx, d.args[1], "auth hmac");
        if (!source) return undefined;
        generic.secrets = [plainSecret(source)];
      }
      return { kind: "hmac", ...generic };
    }
    expectArgs(cx, d, 1, 1, "auth hmac { … }");
    let provider: HmacProvider | null = null;
    const headerOptions: Directive[] = [];
    const headerRule = (set: (v: string) => void) => ({
      handle: (x: Directive) => {
        headerOptions.push(x);
        const a = singleArgOf(cx, x, "<header name>");
        const v = a && decodeHeaderName(cx, a, x.name!.value);
        if (v) set(v);
      },
    });
    readBlock(cx, d, "auth hmac", {
      provider: {
        handle: (x) => {
          const a = singleArgOf(cx, x, "provider github|gitea|stripe|cituro|standard_webhooks");
          const v = a && decodeOneOf(cx, a, "provider", PROVIDERS);
          if (v) provider = v === "forgejo" ? "gitea" : v;
        },
      },
      secret: { repeatable: true, handle: (x) => { const a = singleArgOf(cx, x, "secret <source>"); const s = a && decodeSecretSource(cx, a, "auth hmac secret"); if (s) generic.secrets.push(plainSecret(s)); } },
      secret_ref: { repeatable: true, handle: (x) => generic.secrets.push(...resolveSecretRefs(cx, x, 0, this.secrets, "auth hmac secret_ref", generic.runtimePools)) },
      signature_header: headerRule((v) => (generic.signatureHeader = v)),
      timestamp_header: headerRule((v) => (generic.timestampHeader = v)),
      nonce_header: headerRule((v) => (generic.nonceHeader = v)),
      tolerance: {
        handle: (x: Directive) => {
          headerOptions.push(x);
          scalar.duration(cx, "tolerance", (v) => (generic.toleranceMs = v!), { positive: true }).handle(x);
        },
      },
    });
    const none = generic.secrets.length === 0 && generic.runtimePools.length === 0;
    if (none && cx.failedWithin(d, "secret", "secret_ref")) return undefined;
    if (none) return cx.error(spanOf(d), "missing_directive", "at least one secret or secret_ref in the block", "auth hmac: the block needs at least one secret or secret_ref");
    if (provider) {
      for (const x of headerOptions) cx.error(spanOf(x), "conflict", `no ${x.name!.value} with a provider (the preset fixes headers and tolerance)`, `auth hmac: ${x.name!.value} cannot be combined with provider ${provider} (the preset fixes headers and tolerance)`);
      if (provider === "standard_webhooks") checkStandardWebhooksKeys(cx, spanOf(d), generic.secrets, "auth hmac provider standard_webhooks");
      return { kind: "provider", provider, secrets: generic.secrets, runtimePools: generic.runtimePools, toleranceMs: DEFAULTS.hmacToleranceMs };
    }
    return { kind: "hmac", ...generic };
  }

  // auth forward "<url>" [{ timeout D; copy_headers "N"…; body_limit SIZE }]
  private compileForward(d: Directive): RouteAuth | undefined {
    const cx = this.cx;
    if (!expectArgs(cx, d, 2, 2, 'auth forward "<url>" { … }')) return undefined;
    const url = decodeHttpUrl(cx, d.args[1], "auth forward");
    const out = { timeoutMs: DEFAULTS.forwardAuthTimeoutMs as number, copyHeaders: [] as string[], bodyLimitBytes: DEFAULTS.forwardAuthBodyLimitBytes as number };
    if (d.block) {
      readBlock(cx, d, "auth forward", {
        timeout: scalar.duration(cx, "timeout", (v) => (out.timeoutMs = v!), { positive: true }),
        copy_headers: {
          repeatable: true,
          handle: (x) => {
            if (!expectArgs(cx, x, 1, Infinity, 'copy_headers "Name" …')) return;
            for (const a of x.args) { const v = decodeHeaderName(cx, a, "copy_headers"); if (v) out.copyHeaders.push(v); }
          },
        },
        body_limit: scalar.size(cx, "body_limit", (v) => (out.bodyLimitBytes = v)),
      });
    }
    return url ? { kind: "forward", url, ...out } : undefined;
  }

  /** The route's auth, after the combination rules (docs/spoolfile.md "Ingress auth"; docs/decisions.md D13). */
  build(): RouteAuth {
    const cx = this.cx;
    const kinds = [...this.firstOf.keys()];
    const clash = (a: string, b: string) => {
      if (this.firstOf.has(a) && this.firstOf.has(b)) cx.error(spanOf(this.firstOf.get(b)!), "conflict", `auth ${b} without auth ${a} on the same route`, `auth ${b} cannot be combined with auth ${a} on the same route`);
    };
    clash("basic", "hmac");
    clash("forward", "basic");
    clash("forward", "hmac");
    clash("token", "basic");
    clash("token", "forward");
    if (kinds.length === 0) return { kind: "none" };
    if (this.forward) return this.forward;
    if (this.hmac) {
      if (this.tokens.length > 0) cx.error(spanOf(this.firstOf.get("token")!), "conflict", "auth token without auth hmac on the same route", "auth token cannot be combined with auth hmac on the same route");
      return this.hmac;
    }
    if (this.users.length > 0) return { kind: "basic", users: this.users };
    if (this.tokens.length > 0) return { kind: "token", tokens: this.tokens };
    return { kind: "none" };
  }
}
