// A route block (docs/spoolfile.md "Routes") in three named steps: read its directives into a
// draft (route-rules.ts), check them together (route-checks.ts), build the IR Route.
import type { Arg, Directive } from "../../grammar/index.js";
import { readBlock } from "../block-reader.js";
import type { CompileContext } from "../context.js";
import type { ChannelKind, Route, RouteMode, RoutePublish } from "../ir.js";
import { decodePath } from "../values.js";
import { hasCriteria } from "./matcher.js";
import { checkRouteDraft } from "./route-checks.js";
import { newRouteDraft, type RouteDraft, type RouteGlobals } from "./route-draft.js";
import { routeRules } from "./route-rules.js";

export type { RouteGlobals } from "./route-draft.js";

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

export function compileRoute(cx: CompileContext, d: Directive, pathArg: Arg, channel: ChannelKind, globals: RouteGlobals): CompiledRoute | undefined {
  const path = decodePath(cx, pathArg, "route path");
  const draft = newRouteDraft(cx, globals);
  readBlock(cx, d, `route ${pathArg.raw}`, routeRules(cx, draft, globals, pathArg, path));
  checkRouteDraft(cx, draft, d, pathArg, path, channel);
  if (path === undefined) return undefined;
  const route = buildRoute(draft, path, channel, globals);
  return { route, directive: d, pathArg, backendWritten: draft.backendWritten, labelSpan: draft.labelSpan, pullDirective: draft.pull?.directive ?? null };
}

function buildRoute(draft: RouteDraft, path: string, channel: ChannelKind, globals: RouteGlobals): Route {
  const { pull } = draft;
  const mode: RouteMode = pull
    ? { kind: "pull", path: pull.path, tokens: pull.tokens }
    : { kind: "deliver", targets: draft.targets, concurrency: draft.deliverConcurrency ?? globals.defaults.deliver.concurrency };
  return {
    path,
    channel,
    application: draft.application,
    endpointName: draft.endpointName,
    match: hasCriteria(draft.match) ? draft.match : null,
    rateLimit: draft.rateLimit,
    auth: draft.auth.build(),
    maxBodyBytes: draft.maxBodyBytes,
    maxHeadersBytes: draft.maxHeadersBytes,
    publish: draft.publish as RoutePublish,
    backend: draft.backend,
    mode,
  };
}
