// The management model projections (docs/api.md "Admin API",
// counts included). Pure functions of the config.
import { routeTargets, type Route, type SpoolConfig } from "../../compiler/ir.js";
import { apiError } from "../errors.js";
import { refuseQuery } from "./params.js";
import type { AdminRequest } from "./request.js";
import { labelledRoutes, requireEndpoint } from "./selectors.js";

export interface EndpointProjection {
  name: string;
  application: string;
  route: string;
  mode: "pull" | "deliver" | "exec";
  targets: string[];
  publish_policy: { enabled: boolean; direct_enabled: boolean; managed_enabled: boolean };
}

/** `pull`, `deliver` (HTTP targets, or a mix) or `exec` (every target a local program). */
export function routeModeName(route: Route): EndpointProjection["mode"] {
  if (route.mode.kind === "pull") return "pull";
  return route.mode.targets.length > 0 && route.mode.targets.every((t) => t.kind === "exec") ? "exec" : "deliver";
}

/**
 * Publish flags as they act: the route's switches combined with the instance-wide publish_policy,
 * so `direct_enabled: true` means a direct publish to this route would pass the policy checks.
 */
export function projectEndpoint(config: SpoolConfig, route: Route): EndpointProjection {
  const policy = config.defaults.publishPolicy;
  const modeAllowed = route.mode.kind === "pull" ? policy.allowPullRoutes : policy.allowDeliverRoutes;
  const enabled = route.publish.enabled && modeAllowed;
  return {
    name: route.endpointName ?? "",
    application: route.application ?? "",
    route: route.path,
    mode: routeModeName(route),
    targets: routeTargets(route),
    publish_policy: {
      enabled,
      direct_enabled: enabled && route.publish.direct && policy.direct,
      managed_enabled: enabled && route.publish.managed && policy.managed,
    },
  };
}

/** Applications by name, each with its endpoints by name. */
export function groupApplications(config: SpoolConfig): Map<string, EndpointProjection[]> {
  const applications = new Map<string, EndpointProjection[]>();
  for (const route of labelledRoutes(config)) {
    const name = route.application as string;
    const list = applications.get(name) ?? [];
    list.push(projectEndpoint(config, route));
    applications.set(name, list);
  }
  const sorted = new Map([...applications.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  for (const list of sorted.values()) list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return sorted;
}

export function managementModel(config: SpoolConfig) {
  const applications = groupApplications(config);
  let pathCount = 0;
  for (const endpoints of applications.values()) pathCount += endpoints.length;
  return {
    application_count: applications.size,
    path_count: pathCount,
    applications: [...applications.entries()].map(([name, endpoints]) => ({ name, endpoints })),
  };
}

export async function getModel(request: AdminRequest): Promise<unknown> {
  refuseQuery(request);
  return managementModel(request.config);
}

export async function getApplications(request: AdminRequest): Promise<unknown> {
  refuseQuery(request);
  const applications = groupApplications(request.config);
  return { applications: [...applications.entries()].map(([name, endpoints]) => ({ name, path_count: endpoints.length })) };
}

export async function getApplicationEndpoints(request: AdminRequest): Promise<unknown> {
  refuseQuery(request);
  const endpoints = groupApplications(request.config).get(request.params.application);
  if (!endpoints) throw apiError("managed_endpoint_not_found", `no application ${JSON.stringify(request.params.application)}`);
  return { endpoints };
}

export async function getEndpoint(request: AdminRequest): Promise<unknown> {
  refuseQuery(request);
  const endpoint = requireEndpoint(request.config, request.params.application, request.params.endpoint_name);
  return projectEndpoint(request.config, endpoint.route);
}
