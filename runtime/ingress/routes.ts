// The ingress route table: segment-bounded prefix match, top-down, first match wins
// (docs/spoolfile.md "Routes"). Only inbound routes take ingress traffic;
// outbound and internal routes exist for publish and delivery.
import { pathCovers, type Route } from "../../compiler/index.js";
import { compileMatcher, type CompiledMatcher, type MatchSubject } from "./match.js";

export interface RouteEntry {
  readonly route: Route;
  /** Upper-case methods this route accepts; POST when `match` names none (docs/decisions.md D12). */
  readonly methods: ReadonlySet<string>;
  readonly allowHeader: string;
  readonly matches: CompiledMatcher | null;
}

export type RouteLookup =
  | { kind: "found"; entry: RouteEntry }
  | { kind: "method_not_allowed"; allow: string }
  | { kind: "not_found" };

export interface RouteTable {
  readonly entries: readonly RouteEntry[];
  lookup(path: string, method: string, subject: () => MatchSubject): RouteLookup;
}

export function buildRouteTable(routes: readonly Route[]): RouteTable {
  const entries: RouteEntry[] = routes
    .filter((route) => route.channel === "inbound")
    .map((route) => {
      const named = route.match?.methods ?? [];
      const methods = new Set(named.length > 0 ? named.map((m) => m.toUpperCase()) : ["POST"]);
      return { route, methods, allowHeader: [...methods].join(", "), matches: route.match ? compileMatcher(route.match) : null };
    });

  // Each entry's "found" answer, made once: a lookup runs for every ingress request.
  const found: RouteLookup[] = entries.map((entry) => ({ kind: "found", entry }));
  return {
    entries,
    lookup(path, method, subject) {
      let wrongMethod: RouteEntry | undefined;
      let computed: MatchSubject | undefined;
      for (let index = 0; index < entries.length; index++) {
        const entry = entries[index];
        if (!pathCovers(entry.route.path, path)) continue;
        if (entry.matches) {
          computed ??= subject();
          if (!entry.matches(computed)) continue;
        }
        if (entry.methods.has(method)) return found[index];
        // A later route may accept this method on the same path (e.g. split by `match { method }`).
        wrongMethod ??= entry;
      }
      return wrongMethod ? { kind: "method_not_allowed", allow: wrongMethod.allowHeader } : { kind: "not_found" };
    },
  };
}
