import { directivesOf, formatSpan, sortDiagnostics, hasErrors, type Diagnostic, type Directive, type SpoolfileTree } from "../grammar/index.js";
import { closestName } from "./block-reader.js";
import { CompileContext, nameOf, routeSubject, spanOf, type CompileOptions } from "./context.js";
import { compileAdminApi, compileIngress, compilePullApi } from "./blocks/apis.js";
import { compileDefaults } from "./blocks/defaults.js";
import { compileMatchBlock } from "./blocks/matcher.js";
import { compileObservability } from "./blocks/observability.js";
import { compileRoute, type CompiledRoute, type RouteGlobals } from "./blocks/route.js";
import { compileSecrets, registerVars } from "./blocks/secrets.js";
import { compileQueueLimits, compileRetention } from "./blocks/storage.js";
import { checkConfig } from "./checks.js";
import type { ChannelKind, MatchCriteria, Route, SpoolConfig } from "./ir.js";

export interface CompileResult {
  /** Null when any error was found. */
  readonly config: SpoolConfig | null;
  readonly diagnostics: readonly Diagnostic[];
  /** What placeholders expanded to, and the placeholder as written (CompileContext.expansions). */
  readonly expansions?: ReadonlyMap<string, string>;
}

const SINGLE_BLOCKS = [
  "ingress",
  "pull_api",
  "admin_api",
  "observability",
  "queue_limits",
  "queue_retention",
  "delivered_retention",
  "dlq_retention",
  "attempts_retention",
  "defaults",
  "vars",
  "secrets",
] as const;
type SingleBlock = (typeof SINGLE_BLOCKS)[number];
/** The route channels: a route is inbound unless one of the others is written before its path. */
export const CHANNELS = ["inbound", "outbound", "internal"] as const;

/** A route statement found at top level or inside a channel wrapper. */
interface RouteStatement {
  readonly directive: Directive;
  readonly channel: ChannelKind;
  readonly pathIndex: number;
}

/** Tree → IR. Collects every diagnostic; the config is null when any of them is an error. */
export function compileTree(tree: SpoolfileTree, options: CompileOptions = {}): CompileResult {
  const { config, diagnostics, expansions } = compileTreeWithSources(tree, options);
  return { config, diagnostics, expansions };
}

/**
 * compileTree, also naming the statement each route was compiled from, by the route's path (its
 * placeholders expanded): what edits of a route's statement go by (edit.ts), since a path written
 * with a placeholder matches the IR's path only once expanded.
 */
export function compileTreeWithSources(tree: SpoolfileTree, options: CompileOptions = {}): CompileResult & { routeSources: ReadonlyMap<string, Directive> } {
  const cx = new CompileContext(tree.file, options);
  const blocks = new Map<SingleBlock, Directive>();
  const matcherDirectives: Directive[] = [];
  const routeStatements: RouteStatement[] = [];

  const topLevel = directivesOf(tree.items);
  // A file with no directives at all (empty, blank or comments only) is refused, as the reference
  // does ("empty config"): it is most often a save caught half-way, and applying it on reload would
  // drop every route. A config that means "defaults only" says so with a block, e.g. `ingress { }`.
  if (!topLevel.some((d) => d.name)) {
    cx.error({ file: tree.file, line: 1, col: 1, offset: 0, endOffset: 0 }, "empty_config", "at least one block, e.g. ingress { } for the defaults", "the config is empty: it has no directives (write at least one block, e.g. ingress { } for the defaults)");
  }
  for (const d of topLevel) {
    if (!d.name) continue;
    const name = nameOf(d);
    if ((SINGLE_BLOCKS as readonly string[]).includes(name)) {
      const first = blocks.get(name as SingleBlock);
      if (first) cx.error(spanOf(d), "duplicate_directive", `${name} at most once (first at ${formatSpan(spanOf(first))})`, `duplicate top-level block "${name}" (first at ${formatSpan(spanOf(first))})`);
      else blocks.set(name as SingleBlock, d);
    } else if (name.startsWith("@") && d.name.kind === "word") {
      matcherDirectives.push(d);
    } else if (d.name.kind === "string" || name.startsWith("/")) {
      routeStatements.push({ directive: d, channel: "inbound", pathIndex: -1 });
    } else if ((CHANNELS as readonly string[]).includes(name)) {
      cx.within(name, () => collectChannel(cx, d, name as ChannelKind, routeStatements));
    } else {
      const suggestion = closestName(name, [...SINGLE_BLOCKS, ...CHANNELS]);
      // A misspelt block is that block failed: what depends on it (its vars, secrets, tokens) is not reported again.
      if (suggestion) cx.markBroken("block", suggestion);
      const expected = `a route (/path { … }), @matcher, inbound/outbound/internal, or one of: ${SINGLE_BLOCKS.join(", ")}`;
      cx.error(spanOf(d), "unknown_directive", expected, `unknown top-level block "${name}"${suggestion ? ` (did you mean "${suggestion}"?)` : ""}; expected ${expected}`, { found: name, suggestion, subject: "top level" });
    }
  }

  // Each block compiles under its name: the subject of what it reports (`defaults › deliver › retry`).
  const block = <T>(name: SingleBlock, compile: (d: Directive | undefined) => T): T => cx.within(name, () => compile(blocks.get(name)));
  block("vars", (d) => registerVars(cx, d));
  const secrets = block("secrets", (d) => compileSecrets(cx, d));
  const defaults = block("defaults", (d) => compileDefaults(cx, d));
  const matchers = cx.within("matcher", () => compileMatchers(cx, matcherDirectives));
  const globals: RouteGlobals = { defaults, matchers, secrets };
  const compiledRoutes: CompiledRoute[] = [];
  for (const statement of routeStatements) {
    const { directive, channel, pathIndex } = statement;
    const pathArg = pathIndex < 0 ? directive.name! : directive.args[pathIndex];
    const compiled = cx.within(routeSubject(pathArg.value), () => {
      if (pathIndex < 0 && directive.args.length > 0) {
        cx.error(directive.args[0].span, "wrong_arguments", "no arguments after the path (a route is /path { … })", `route ${pathArg.raw}: unexpected argument ${JSON.stringify(directive.args[0].value)} (a route is /path { … })`, { found: directive.args[0].value });
      }
      if (!directive.block) return cx.error(pathArg.span, "missing_block", "a block: /path { … }", `route ${pathArg.raw} needs a block: ${pathArg.raw} { … }`);
      return compileRoute(cx, directive, pathArg, channel, globals);
    });
    if (compiled) compiledRoutes.push(compiled);
  }

  const partial = {
    ingress: block("ingress", (d) => compileIngress(cx, d)),
    pullApi: block("pull_api", (d) => compilePullApi(cx, d)),
    adminApi: block("admin_api", (d) => compileAdminApi(cx, d)),
    observability: block("observability", (d) => compileObservability(cx, d)),
    queueLimits: block("queue_limits", (d) => compileQueueLimits(cx, d)),
    // The retention blocks name themselves (storage.ts).
    retention: compileRetention(cx, {
      queue: blocks.get("queue_retention"),
      delivered: blocks.get("delivered_retention"),
      dlq: blocks.get("dlq_retention"),
      attempts: blocks.get("attempts_retention"),
    }),
    defaults,
    vars: cx.allVars(),
    secrets,
    matchers,
  };
  const backend = checkConfig(cx, { ...partial, compiledRoutes, blocks });
  const routes: Route[] = compiledRoutes.map((c) => ({ ...c.route, backend }));
  const config: SpoolConfig = { ...partial, routes, backend };
  const diagnostics = sortDiagnostics(cx.diagnostics);
  const routeSources = new Map(compiledRoutes.map((c) => [c.route.path, c.directive]));
  return { config: hasErrors(diagnostics) ? null : config, diagnostics, routeSources, expansions: cx.expansions };
}

// inbound|outbound|internal /path { … }   or the wrapper   internal { /a { … } /b { … } }
function collectChannel(cx: CompileContext, d: Directive, channel: ChannelKind, into: RouteStatement[]): void {
  if (d.args.length === 1) {
    into.push({ directive: d, channel, pathIndex: 0 });
    return;
  }
  if (d.args.length > 1) {
    cx.error(d.args[1].span, "wrong_arguments", `${channel} /path { … } or ${channel} { /path { … } … }`, `${channel}: expected ${channel} /path { … } or ${channel} { /path { … } … }`);
    return;
  }
  if (!d.block) {
    cx.error(spanOf(d), "missing_block", `${channel} /path { … } or ${channel} { /path { … } }`, `${channel} needs a route: ${channel} /path { … } or ${channel} { /path { … } }`);
    return;
  }
  for (const inner of directivesOf(d.block.items)) {
    if (!inner.name) continue;
    if (inner.name.kind === "string" || inner.name.value.startsWith("/")) into.push({ directive: inner, channel, pathIndex: -1 });
    else cx.error(spanOf(inner), "not_allowed_here", "only routes /path { … } in the block", `${channel} block: expected a route /path { … }, got ${JSON.stringify(inner.name.value)}`);
  }
}

// @name { method …; host …; header "N" "V"; … } at top level, referenced by `match @name`.
function compileMatchers(cx: CompileContext, directives: readonly Directive[]): Record<string, MatchCriteria> {
  const out: Record<string, MatchCriteria> = {};
  const firstAt = new Map<string, Directive>();
  for (const d of directives) {
    const name = nameOf(d).slice(1);
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(name)) {
      cx.error(spanOf(d), "expected_name", "@ followed by letters, digits, _, . or -", `matcher name ${JSON.stringify(nameOf(d))} must be @ followed by letters, digits, _, . or -`);
      continue;
    }
    if (firstAt.has(name)) {
      cx.error(spanOf(d), "duplicate_directive", `each matcher name once (first at ${formatSpan(spanOf(firstAt.get(name)!))})`, `duplicate matcher @${name} (first at ${formatSpan(spanOf(firstAt.get(name)!))})`);
      continue;
    }
    firstAt.set(name, d);
    if (d.args.length > 0) cx.error(d.args[0].span, "wrong_arguments", "no arguments, only a block", `matcher @${name} takes no arguments, only a block`);
    out[name] = compileMatchBlock(cx, d, `@${name}`);
  }
  return out;
}

