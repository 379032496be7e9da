// A route while its block is read: what its directives set so far (route.ts compiles it,
// route-rules.ts fills it, route-checks.ts checks the combination).
import type { Directive } from "../../grammar/index.js";
import type { Backend, DeliverTarget, MatchCriteria, NamedSecret, Route, SecretSource, Defaults } from "../ir.js";
import { emptyCriteria } from "./matcher.js";
import { RouteAuthBuilder } from "./route-auth.js";
import type { CompileContext } from "../context.js";

export interface RouteGlobals {
  readonly defaults: Defaults;
  readonly matchers: Readonly<Record<string, MatchCriteria>>;
  readonly secrets: readonly NamedSecret[];
}

export type PublishForm = "shorthand" | "dotted" | "block";

export interface PullDraft {
  readonly directive: Directive;
  path: string;
  tokens: SecretSource[] | null;
}

export interface RouteDraft {
  application: string | null;
  endpointName: string | null;
  /** The first label directive written, where a missing partner is reported. */
  labelSpan: Directive | null;
  readonly labelsWritten: Set<"application" | "endpoint_name">;
  readonly match: ReturnType<typeof emptyCriteria>;
  rateLimit: Route["rateLimit"];
  readonly auth: RouteAuthBuilder;
  maxBodyBytes: number;
  maxHeadersBytes: number;
  readonly publish: { enabled: boolean; direct: boolean; managed: boolean };
  readonly publishForms: Map<PublishForm, Directive>;
  backend: Backend;
  /** Whether `queue { backend }` was written (otherwise the instance backend applies). */
  backendWritten: boolean;
  deliverConcurrency: number | null;
  pull: PullDraft | null;
  readonly targets: DeliverTarget[];
  /** deliver directives written, valid or not. */
  deliverCount: number;
  /** The directives an outbound or internal route may not have (match, rate_limit, auth). */
  readonly forbidden: Directive[];
}

export function newRouteDraft(cx: CompileContext, globals: RouteGlobals): RouteDraft {
  return {
    application: null,
    endpointName: null,
    labelSpan: null,
    labelsWritten: new Set(),
    match: emptyCriteria(),
    rateLimit: null,
    auth: new RouteAuthBuilder(cx, globals.secrets),
    maxBodyBytes: globals.defaults.maxBodyBytes,
    maxHeadersBytes: globals.defaults.maxHeadersBytes,
    publish: { enabled: true, direct: true, managed: true },
    publishForms: new Map(),
    backend: "sqlite",
    backendWritten: false,
    deliverConcurrency: null,
    pull: null,
    targets: [],
    deliverCount: 0,
    forbidden: [],
  };
}
