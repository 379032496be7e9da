// Resolving what a request names (a route path or an application+endpoint_name pair) against the
// config, and the managed-selector rules of filter mutations (docs/decisions.md
// D30).
import type { Route, SpoolConfig } from "../../compiler/ir.js";
import { apiError } from "../errors.js";

/**
 * On endpoint-scoped paths the URL path is the selector: these fields in a query or body are
 * refused with 400 selector_scope_forbidden (docs/decisions.md D30).
 */
export const SCOPED_SELECTOR_FIELDS = {
  route: "route is set by the endpoint path and may not be given",
  application: "application is set by the endpoint path and may not be given",
  endpoint_name: "endpoint_name is set by the endpoint path and may not be given",
} as const satisfies Readonly<Record<string, string>>;

export interface ManagedEndpoint {
  application: string;
  endpointName: string;
  route: Route;
}

export function findRoute(config: SpoolConfig, path: string): Route | undefined {
  return config.routes.find((route) => route.path === path);
}

export function isLabelled(route: Route): boolean {
  return route.application !== null && route.endpointName !== null;
}

export function labelledRoutes(config: SpoolConfig): Route[] {
  return config.routes.filter(isLabelled);
}

export function findEndpoint(config: SpoolConfig, application: string, endpointName: string): ManagedEndpoint | undefined {
  const route = config.routes.find((r) => r.application === application && r.endpointName === endpointName);
  return route ? { application, endpointName, route } : undefined;
}

/** 404 managed_endpoint_not_found when the pair names no labelled route (docs/decisions.md D30). */
export function requireEndpoint(config: SpoolConfig, application: string, endpointName: string): ManagedEndpoint {
  const endpoint = findEndpoint(config, application, endpointName);
  if (!endpoint) {
    throw apiError("managed_endpoint_not_found", `no endpoint ${JSON.stringify(endpointName)} in application ${JSON.stringify(application)}`);
  }
  return endpoint;
}

/** What a global request selected: nothing, a route path, or a managed endpoint. */
export type SelectorChoice =
  | { kind: "none" }
  | { kind: "route"; route: string }
  | { kind: "managed"; endpoint: ManagedEndpoint };

export interface SelectorFields {
  route?: string;
  application?: string;
  endpoint_name?: string;
}

/**
 * route and application+endpoint_name are mutually exclusive, and the pair is used together.
 * `refuse` builds the 400 with the caller's code (invalid_query for queries, invalid_body for bodies).
 */
export function chooseSelector(
  config: SpoolConfig,
  fields: SelectorFields,
  refuse: (detail: string) => Error,
): SelectorChoice {
  const { route, application, endpoint_name: endpointName } = fields;
  if (route !== undefined && (application !== undefined || endpointName !== undefined)) {
    throw refuse("route and application+endpoint_name are mutually exclusive");
  }
  if ((application === undefined) !== (endpointName === undefined)) {
    throw refuse("application and endpoint_name must be given together");
  }
  if (route !== undefined) {
    if (!route.startsWith("/")) throw refuse(`route must start with "/", got ${JSON.stringify(route)}`);
    return { kind: "route", route };
  }
  if (application !== undefined && endpointName !== undefined) {
    return { kind: "managed", endpoint: requireEndpoint(config, application, endpointName) };
  }
  return { kind: "none" };
}

/**
 * Filter mutations must name a managed endpoint when the route they touch is labelled, and may not
 * run unscoped while any labelled route exists: a bulk change across managed endpoints has to be
 * asked for endpoint by endpoint.
 */
export function enforceManagedSelector(config: SpoolConfig, choice: SelectorChoice): void {
  if (choice.kind === "route") {
    const route = findRoute(config, choice.route);
    if (route && isLabelled(route)) {
      throw apiError(
        "managed_selector_required",
        `route ${route.path} is managed as ${route.application}/${route.endpointName}: use application+endpoint_name`,
      );
    }
  }
  if (choice.kind === "none" && labelledRoutes(config).length > 0) {
    throw apiError("managed_selector_required", "labelled routes exist: name a route or application+endpoint_name");
  }
}

/** The store selector route of a choice, undefined for "all routes". */
export function selectedRoute(choice: SelectorChoice): string | undefined {
  if (choice.kind === "route") return choice.route;
  if (choice.kind === "managed") return choice.endpoint.route.path;
  return undefined;
}
