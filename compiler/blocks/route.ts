import type { Arg, Directive } from "../../grammar/index.js";
import { readBareBlock, readBlock, scalar } from "../block-reader.js";
import { spanOf, type CompileContext } from "../context.js";
import { DEFAULTS } from "../defaults.js";
import type { Backend, ChannelKind, Defaults, DeliverTarget, MatchCriteria, NamedSecret, Route, RouteMode, RoutePublish, SecretSource } from "../ir.js";
import { decodeBool, decodeLabel, decodeOneOf, decodePath, decodeSecretSource, expectArgs, expectNoBlock, singleArgOf } from "../values.js";
import { compileRateLimit } from "./apis.js";
import { compileDeliver } from "./deliver.js";
import { checkDeliverEgress } from "./deliver-egress.js";
import { compileMatchBlock, emptyCriteria, hasCriteria, mergeCriteria } from "./matcher.js";
import { RouteAuthBuilder } from "./route-auth.js";

export interface RouteGlobals {
  readonly defaults: Defaults;
  readonly matchers: Readonly<Record<string, MatchCriteria>>;
  readonly secrets: readonly NamedSecret[];
}

/** A compiled route with the spans the cross-checks report at. */
export interface CompiledRoute {
  readonly route: Route;
  readonly directive: Directive;
  readonly pathArg: Arg;
  /** Whether `queue { backend }` was written (otherwise the instance backend applies). */
  readonly backendWritten: boolean;
  readonly labelSpan: Directive | null;
  readonly pullDirective: Directive | null;
}

const BACKENDS = ["sqlite", "memory", "postgres"] as const;

// /<path> { application; endpoint_name; match @a @b | match { … }; rate_limit { … }; auth …;
//   max_body; max_headers; publish on|off | publish { enabled; direct; managed } | publish.direct X |
//   publish.managed X; queue <backend> | queue { backend X }; deliver_concurrency N;
//   pull { path /p; auth token <source>… }; deliver "<url>" { … }…; deliver exec "<program>" { … }… }
export function compileRoute(cx: CompileContext, d: Directive, pathArg: Arg, channel: ChannelKind, globals: RouteGlobals): CompiledRoute | undefined {
  const path = decodePath(cx, pathArg, "route path");
  let application: string | null = null;
  let endpointName: string | null = null;
  let labelSpan: Directive | null = null;
  const labelsWritten = new Set<"application" | "endpoint_name">();
  const match = emptyCriteria();
  let rateLimit: Route["rateLimit"] = null;
  const auth = new RouteAuthBuilder(cx, globals.secrets);
  let maxBodyBytes = globals.defaults.maxBodyBytes;
  let maxHeadersBytes = globals.defaults.maxHeadersBytes;
  const publish = { enabled: true, direct: true, managed: true };
  const publishForms = new Map<"shorthand" | "dotted" | "block", Directive>();
  let backend: Backend = "sqlite";
  let backendWritten = false;
  let deliverConcurrency: number | null = null;
  // Assigned inside the block reader's callbacks; the cast keeps TypeScript from narrowing it to null.
  let pull = null as { directive: Directive; path: string; tokens: SecretSource[] | null } | null;
  const targets: DeliverTarget[] = [];
  let deliverCount = 0;
  const forbidden: Directive[] = [];

  const publishDotted = (key: "direct" | "managed") => ({
    handle: (x: Directive) => {
      publishForms.set("dotted", x);
      const a = singleArgOf(cx, x, `publish.${key} on|off`);
      const v = a && decodeBool(cx, a, `publish.${key}`);
      if (v !== undefined) publish[key] = v;
    },
  });

  readBlock(cx, d, `route ${pathArg.raw}`, {
    application: { handle: (x) => { const a = singleArgOf(cx, x, 'application "<name>"'); application = (a && decodeLabel(cx, a, "application")) ?? null; labelSpan = x; labelsWritten.add("application"); } },
    endpoint_name: { handle: (x) => { const a = singleArgOf(cx, x, 'endpoint_name "<name>"'); endpointName = (a && decodeLabel(cx, a, "endpoint_name")) ?? null; labelSpan ??= x; labelsWritten.add("endpoint_name"); } },
    match: {
      repeatable: true,
      handle: (x) => {
        forbidden.push(x);
        if (x.block) {
          expectArgs(cx, x, 0, 0, "match { … }");
          compileMatchBlock(cx, x, "match", match);
          return;
        }
        if (!expectArgs(cx, x, 1, Infinity, "match @name … or match { … }")) return;
        for (const ref of x.args) {
          const name = cx.text(ref);
          const named = name.startsWith("@") ? globals.matchers[name.slice(1)] : undefined;
          if (!name.startsWith("@")) cx.error(ref.span, "invalid_value", "a matcher reference like @name", `match: expected a matcher reference like @name, got ${JSON.stringify(ref.value)}`, { found: ref.value });
          else if (!named) cx.error(ref.span, "unknown_reference", "a matcher defined at top level (@name { … })", `match: unknown matcher ${name}; define it at top level: ${name} { … }`, { found: name });
          else mergeCriteria(match, named);
        }
      },
    },
    rate_limit: { handle: (x) => { forbidden.push(x); rateLimit = compileRateLimit(cx, x, "rate_limit") ?? null; } },
    auth: { repeatable: true, handle: (x) => { forbidden.push(x); if (expectNoBlockUnless(cx, x)) auth.add(x); } },
    max_body: scalar.size(cx, "max_body", (v) => (maxBodyBytes = v)),
    max_headers: scalar.size(cx, "max_headers", (v) => (maxHeadersBytes = v)),
    publish: {
      handle: (x) => {
        if (x.block) {
          publishForms.set("block", x);
          expectArgs(cx, x, 0, 0, "publish { … }");
          readBlock(cx, x, "publish", {
            enabled: scalar.bool(cx, "enabled", (v) => (publish.enabled = v)),
            direct: scalar.bool(cx, "direct", (v) => (publish.direct = v)),
            managed: scalar.bool(cx, "managed", (v) => (publish.managed = v)),
          });
          return;
        }
        publishForms.set("shorthand", x);
        const a = singleArgOf(cx, x, "publish on|off or publish { … }");
        const v = a && decodeBool(cx, a, "publish");
        if (v !== undefined) publish.enabled = v;
      },
    },
    "publish.direct": publishDotted("direct"),
    "publish.managed": publishDotted("managed"),
    queue: {
      handle: (x) => {
        backendWritten = true;
        if (x.block) {
          expectArgs(cx, x, 0, 0, "queue { backend … }");
          readBlock(cx, x, "queue", {
            backend: { handle: (b) => { const a = singleArgOf(cx, b, "backend sqlite|memory|postgres"); const v = a && decodeOneOf(cx, a, "backend", BACKENDS); if (v) backend = v; } },
          });
          return;
        }
        const a = singleArgOf(cx, x, "queue sqlite|memory|postgres or queue { backend … }");
        const v = a && decodeOneOf(cx, a, "queue", BACKENDS);
        if (v) backend = v;
      },
    },
    deliver_concurrency: scalar.int(cx, "deliver_concurrency", 1, DEFAULTS.deliverConcurrencyMax, (v) => (deliverConcurrency = v)),
    pull: {
      handle: (x) => {
        const state: { directive: Directive; path: string; tokens: SecretSource[] | null } = { directive: x, path: "", tokens: null };
        pull = state;
        const tokens: SecretSource[] = [];
        // A path that is there but invalid has its own error; "required" is only for a missing one.
        let pathGiven = false;
        readBareBlock(cx, x, "pull", {
          path: {
            handle: (p) => {
              pathGiven = true;
              const a = singleArgOf(cx, p, "path /name");
              const v = a && decodePath(cx, a, "pull path");
              if (v) state.path = v;
            },
          },
          auth: {
            repeatable: true,
            handle: (t) => {
              if (!expectArgs(cx, t, 2, 2, "auth token <source>") || !expectNoBlock(cx, t)) return;
              if (t.args[0].value !== "token") return void cx.error(t.args[0].span, "expected_enum", '"token" (auth token <source>)', `pull auth: expected "token", got ${JSON.stringify(t.args[0].value)}`, { found: t.args[0].value });
              const s = decodeSecretSource(cx, t.args[1], "pull auth token");
              if (s) tokens.push(s);
            },
          },
        });
        if (tokens.length > 0) state.tokens = tokens;
        if (x.block && !pathGiven && !cx.failedWithin(x, "path")) cx.error(spanOf(x), "missing_directive", "path /name inside pull { … }", "pull: path is required (pull { path /name })");
      },
    },
    deliver: {
      repeatable: true,
      handle: (x) => {
        deliverCount++;
        const target = compileDeliver(cx, x, globals.defaults, globals.secrets);
        if (!target) return;
        if (target.kind === "http") checkDeliverEgress(cx, x.args[0], target.url, path ?? pathArg.value, globals.defaults.egress);
        if (targets.some((t) => t.target === target.target)) cx.error(spanOf(x), "duplicate_directive", "each deliver target once per route", `deliver: target ${target.target} is listed twice on this route`, { found: target.target });
        else targets.push(target);
      },
    },
  });

  // Label pairing (docs/spoolfile.md "Routes").
  // Only when one was not written at all: an invalid value has its own error already.
  // The missing one misspelt (`endpoint_nam`) has its own error.
  const missingLabel = labelsWritten.has("application") ? "endpoint_name" : "application";
  if (labelsWritten.size === 1 && labelSpan && !cx.failedWithin(d, missingLabel)) {
    cx.error(spanOf(labelSpan), "missing_directive", "application and endpoint_name set together", "application and endpoint_name must be set together");
  }
  if (publishForms.has("shorthand") && (publishForms.has("dotted") || publishForms.has("block"))) {
    cx.error(spanOf(publishForms.get("dotted") ?? publishForms.get("block")!), "conflict", "either publish on|off, or publish.direct/publish.managed, or a publish block", "publish: the shorthand publish on|off cannot be mixed with publish.direct/publish.managed or a publish block");
  }
  if (publishForms.has("dotted") && publishForms.has("block")) {
    cx.error(spanOf(publishForms.get("dotted")!), "conflict", "either publish.direct/publish.managed or a publish block", "publish: publish.direct/publish.managed cannot be mixed with a publish block");
  }

  // Channel rules (docs/spoolfile.md "Routes"): outbound needs deliver and takes no ingress
  // criteria; internal needs pull; neither takes auth, match or rate_limit.
  if (channel !== "inbound") {
    for (const x of forbidden) cx.error(spanOf(x), "not_allowed_here", `no ${x.name!.value} on an ${channel} route (it receives no ingress traffic)`, `${x.name!.value} is not allowed on an ${channel} route (it receives no ingress traffic)`);
  }
  if (channel === "outbound" && pull) cx.error(spanOf(pull.directive), "not_allowed_here", "no pull on an outbound route: outbound routes deliver", "pull is not allowed on an outbound route: outbound routes deliver");
  if (channel === "internal" && deliverCount > 0) cx.error(pathArg.span, "not_allowed_here", "no deliver on an internal route: internal routes are pulled", "deliver is not allowed on an internal route: internal routes are pulled");
  if (pull && deliverCount > 0) cx.error(spanOf(pull.directive), "conflict", "either pull or deliver on one route", "a route is either pulled or delivered: remove pull or deliver");
  // A pull or deliver that is there but misspelt or invalid has its own error.
  if (!pull && deliverCount === 0 && d.block && !cx.failedWithin(d, "pull", "deliver")) {
    cx.error(pathArg.span, "missing_directive", channel === "internal" ? "pull { path … }" : "pull { path … } or at least one deliver target", channel === "internal" ? "internal route needs pull { path … }" : `route ${path ?? pathArg.value} needs pull { path … } or at least one deliver target`);
  }
  if (deliverConcurrency !== null && deliverCount === 0) cx.error(pathArg.span, "not_allowed_here", "deliver_concurrency only on a route with deliver targets", "deliver_concurrency needs deliver targets");

  if (path === undefined) return undefined;
  const mode: RouteMode = pull
    ? { kind: "pull", path: pull.path, tokens: pull.tokens }
    : { kind: "deliver", targets, concurrency: deliverConcurrency ?? globals.defaults.deliver.concurrency };
  const route: Route = {
    path,
    channel,
    application,
    endpointName,
    match: hasCriteria(match) ? match : null,
    rateLimit,
    auth: auth.build(),
    maxBodyBytes,
    maxHeadersBytes,
    publish: publish as RoutePublish,
    backend,
    mode,
  };
  return { route, directive: d, pathArg, backendWritten, labelSpan, pullDirective: pull?.directive ?? null };
}

/** `auth … { }` blocks are only valid for hmac and forward; the auth builder checks the rest (an unknown kind, with its did-you-mean). */
function expectNoBlockUnless(cx: CompileContext, x: Directive): boolean {
  const kind = x.args[0]?.value;
  if (kind !== "token" && kind !== "basic") return true;
  return expectNoBlock(cx, x);
}
