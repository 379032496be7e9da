// The directives of a route block (docs/spoolfile.md "Routes"), one rule each, filling a RouteDraft.
// /<path> { application; endpoint_name; match @a @b | match { … }; rate_limit { … }; auth …;
//   max_body; max_headers; publish on|off | publish { enabled; direct; managed } | publish.direct X |
//   publish.managed X; queue <backend> | queue { backend X }; deliver_concurrency N;
//   pull { path /p; auth token <source>… }; deliver "<url>" { … }…; deliver exec "<program>" { … }… }
import type { Arg, Directive } from "../../grammar/index.js";
import { readBareBlock, readBlock, scalar, type DirectiveRule } from "../block-reader.js";
import { spanOf, type CompileContext } from "../context.js";
import { DEFAULTS } from "../defaults.js";
import type { SecretSource } from "../ir.js";
import { decodeBool, decodeLabel, decodeOneOf, decodePath, expectArgs, expectNoBlock, singleArgOf } from "../values.js";
import { authTokenInto, compileRateLimit } from "./apis.js";
import { compileDeliver } from "./deliver.js";
import { checkDeliverEgress } from "./deliver-egress.js";
import { compileMatchBlock, mergeCriteria } from "./matcher.js";
import type { PullDraft, RouteDraft, RouteGlobals } from "./route-draft.js";
import { QUEUE_BACKENDS } from "../reference.js";

const BACKENDS = QUEUE_BACKENDS;

/** The rules of one route's block; `path` is the decoded route path (undefined when invalid). */
export function routeRules(cx: CompileContext, draft: RouteDraft, globals: RouteGlobals, pathArg: Arg, path: string | undefined): Record<string, DirectiveRule> {
  // The key order is the order "expected one of: …" lists them in.
  return {
    application: labelRule(cx, draft, "application"),
    endpoint_name: labelRule(cx, draft, "endpoint_name"),
    match: { repeatable: true, handle: (x) => compileMatch(cx, draft, globals, x) },
    rate_limit: { handle: (x) => { draft.forbidden.push(x); draft.rateLimit = compileRateLimit(cx, x, "rate_limit") ?? null; } },
    auth: {
      repeatable: true,
      handle: (x) => {
        draft.forbidden.push(x);
        if (expectNoBlockUnless(cx, x)) draft.auth.add(x);
      },
    },
    max_body: scalar.size(cx, "max_body", (v) => (draft.maxBodyBytes = v)),
    max_headers: scalar.size(cx, "max_headers", (v) => (draft.maxHeadersBytes = v)),
    publish: { handle: (x) => compilePublish(cx, draft, x) },
    "publish.direct": publishDottedRule(cx, draft, "direct"),
    "publish.managed": publishDottedRule(cx, draft, "managed"),
    queue: { handle: (x) => compileQueue(cx, draft, x) },
    deliver_concurrency: scalar.int(cx, "deliver_concurrency", 1, DEFAULTS.deliverConcurrencyMax, (v) => (draft.deliverConcurrency = v)),
    pull: { handle: (x) => (draft.pull = compilePull(cx, x)) },
    deliver: { repeatable: true, handle: (x) => compileDeliverTarget(cx, draft, globals, x, path ?? pathArg.value) },
  };
}

function labelRule(cx: CompileContext, draft: RouteDraft, which: "application" | "endpoint_name"): DirectiveRule {
  return {
    handle: (x) => {
      const a = singleArgOf(cx, x, `${which} "<name>"`);
      const value = (a && decodeLabel(cx, a, which)) ?? null;
      if (which === "application") {
        draft.application = value;
        draft.labelSpan = x;
      } else {
        draft.endpointName = value;
        draft.labelSpan ??= x;
      }
      draft.labelsWritten.add(which);
    },
  };
}

/** `match { … }` inline, or `match @a @b` naming top-level matchers; all of them are merged. */
function compileMatch(cx: CompileContext, draft: RouteDraft, globals: RouteGlobals, x: Directive): void {
  draft.forbidden.push(x);
  if (x.block) {
    expectArgs(cx, x, 0, 0, "match { … }");
    compileMatchBlock(cx, x, "match", draft.match);
    return;
  }
  if (!expectArgs(cx, x, 1, Infinity, "match @name … or match { … }")) return;
  for (const ref of x.args) {
    const name = cx.text(ref);
    const named = name.startsWith("@") ? globals.matchers[name.slice(1)] : undefined;
    if (!name.startsWith("@")) {
      cx.error(ref.span, "invalid_value", "a matcher reference like @name", `match: expected a matcher reference like @name, got ${JSON.stringify(ref.value)}`, { found: ref.value });
    } else if (!named) {
      const message = `match: unknown matcher ${name}; define it at top level: ${name} { … }`;
      cx.error(ref.span, "unknown_reference", "a matcher defined at top level (@name { … })", message, { found: name });
    } else {
      mergeCriteria(draft.match, named);
    }
  }
}

/** `publish on|off` or `publish { enabled; direct; managed }`. */
function compilePublish(cx: CompileContext, draft: RouteDraft, x: Directive): void {
  const { publish } = draft;
  if (x.block) {
    draft.publishForms.set("block", x);
    expectArgs(cx, x, 0, 0, "publish { … }");
    readBlock(cx, x, "publish", {
      enabled: scalar.bool(cx, "enabled", (v) => (publish.enabled = v)),
      direct: scalar.bool(cx, "direct", (v) => (publish.direct = v)),
      managed: scalar.bool(cx, "managed", (v) => (publish.managed = v)),
    });
    return;
  }
  draft.publishForms.set("shorthand", x);
  const a = singleArgOf(cx, x, "publish on|off or publish { … }");
  const v = a && decodeBool(cx, a, "publish");
  if (v !== undefined) publish.enabled = v;
}

function publishDottedRule(cx: CompileContext, draft: RouteDraft, key: "direct" | "managed"): DirectiveRule {
  return {
    handle: (x) => {
      draft.publishForms.set("dotted", x);
      const a = singleArgOf(cx, x, `publish.${key} on|off`);
      const v = a && decodeBool(cx, a, `publish.${key}`);
      if (v !== undefined) draft.publish[key] = v;
    },
  };
}

/** `queue <backend>` or `queue { backend <backend> }`. */
function compileQueue(cx: CompileContext, draft: RouteDraft, x: Directive): void {
  draft.backendWritten = true;
  if (x.block) {
    expectArgs(cx, x, 0, 0, "queue { backend … }");
    readBlock(cx, x, "queue", {
      backend: {
        handle: (b) => {
          const a = singleArgOf(cx, b, "backend sqlite|memory|postgres");
          const v = a && decodeOneOf(cx, a, "backend", BACKENDS);
          if (v) draft.backend = v;
        },
      },
    });
    return;
  }
  const a = singleArgOf(cx, x, "queue sqlite|memory|postgres or queue { backend … }");
  const v = a && decodeOneOf(cx, a, "queue", BACKENDS);
  if (v) draft.backend = v;
}

/** `pull { path /name; auth token <source>… }`: the route is pulled through the Pull API. */
function compilePull(cx: CompileContext, x: Directive): PullDraft {
  const state: PullDraft = { directive: x, path: "", tokens: null };
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
    auth: { repeatable: true, handle: (t) => authTokenInto(cx, t, "pull", tokens) },
  });
  if (tokens.length > 0) state.tokens = tokens;
  if (x.block && !pathGiven && !cx.failedWithin(x, "path")) cx.error(spanOf(x), "missing_directive", "path /name inside pull { … }", "pull: path is required (pull { path /name })");
  return state;
}

/** `deliver "<url>" { … }` or `deliver exec "<program>" { … }`: one target, checked against the egress policy. */
function compileDeliverTarget(cx: CompileContext, draft: RouteDraft, globals: RouteGlobals, x: Directive, routePath: string): void {
  draft.deliverCount++;
  const target = compileDeliver(cx, x, globals.defaults, globals.secrets);
  if (!target) return;
  if (target.kind === "http") checkDeliverEgress(cx, x.args[0], target.url, routePath, globals.defaults.egress);
  if (draft.targets.some((t) => t.target === target.target)) {
    cx.error(spanOf(x), "duplicate_directive", "each deliver target once per route", `deliver: target ${target.target} is listed twice on this route`, { found: target.target });
  } else {
    draft.targets.push(target);
  }
}

/** `auth … { }` blocks are only valid for hmac and forward; the auth builder checks the rest (an unknown kind, with its did-you-mean). */
function expectNoBlockUnless(cx: CompileContext, x: Directive): boolean {
  const kind = x.args[0]?.value;
  if (kind !== "token" && kind !== "basic") return true;
  return expectNoBlock(cx, x);
}
