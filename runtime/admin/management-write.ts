// PUT and DELETE /applications/{a}/endpoints/{e}: an audited rewrite of the Spoolfile's label
// statements followed by a reload (docs/api.md "Admin API"; docs/decisions.md
// D5: only the changed statements are touched, atomic write, restore on a failed
// reload; the change is live when the response returns).
import { readFile } from "node:fs/promises";
import { setRouteLabels, writeFileAtomically } from "../../compiler/index.js";
import { routeTargets, type Route } from "../../compiler/ir.js";
import { apiError } from "../errors.js";
import { parseStrictJson } from "../http/json.js";
import type { AdminDeps } from "./deps.js";
import { refuseQuery } from "./params.js";
import { projectEndpoint, type EndpointProjection } from "./management-model.js";
import type { AdminRequest, MutationHandler, MutationResult } from "./request.js";
import { findEndpoint, findRoute, isLabelled } from "./selectors.js";
import { isValidLabel, LABEL_PATTERN } from "../../compiler/index.js";

export type MappingAction = "created" | "updated" | "noop" | "deleted";

const PUT_SCHEMA = { route: { type: "string", required: true } } as const;

// One config rewrite at a time per Admin API: two PUTs must not both read the same old text.
const configLocks = new WeakMap<AdminDeps, Promise<unknown>>();

function withConfigLock<T>(deps: AdminDeps, work: () => Promise<T>): Promise<T> {
  const previous = configLocks.get(deps) ?? Promise.resolve();
  const next = previous.then(work, work);
  configLocks.set(deps, next.catch(() => undefined));
  return next;
}

export function putEndpointMapping(): MutationHandler {
  return {
    tool: "management_endpoint_upsert",
    async run(request) {
      refuseQuery(request);
      const { application, endpoint_name: endpointName } = checkedLabels(request);
      const { route: routePath } = parseStrictJson(await request.body(), PUT_SCHEMA);
      if (!routePath.startsWith("/")) throw apiError("invalid_body", `route must be an absolute path starting with "/", got ${JSON.stringify(routePath)}`);
      const { deps } = request;
      return withConfigLock(deps, async () => {
        const config = deps.getConfig();
        const target = findRoute(config, routePath);
        if (!target) throw apiError("management_route_not_found", `no route ${routePath} is configured`);
        if (!target.publish.enabled || !target.publish.managed) {
          throw apiError("management_route_publish_disabled", `route ${routePath} needs publish on and publish.managed on to be an endpoint`);
        }
        if (isLabelled(target) && (target.application !== application || target.endpointName !== endpointName)) {
          throw apiError("management_route_already_mapped", `route ${routePath} is already mapped to ${target.application}/${target.endpointName}`);
        }
        const current = findEndpoint(config, application, endpointName);
        if (current && current.route.path === routePath) {
          return mappingResult("noop", false, projectEndpoint(config, current.route), "upsert_endpoint", application, endpointName);
        }
        if (current) {
          if (!sameDelivery(current.route, target)) {
            throw apiError(
              "management_route_target_mismatch",
              `moving ${application}/${endpointName} from ${current.route.path} to ${routePath} would change its mode or targets`,
            );
          }
          await refuseActiveBacklog(deps, current.route.path);
        }
        await rewriteLabels(deps, [
          ...(current ? [{ routePath: current.route.path, labels: null }] : []),
          { routePath, labels: { application, endpointName } },
        ]);
        const live = findEndpoint(deps.getConfig(), application, endpointName);
        if (!live) throw apiError("internal_error", "the reloaded config does not hold the new mapping");
        return mappingResult(current ? "updated" : "created", true, projectEndpoint(deps.getConfig(), live.route), "upsert_endpoint", application, endpointName);
      });
    },
  };
}

export function deleteEndpointMapping(): MutationHandler {
  return {
    tool: "management_endpoint_delete",
    async run(request) {
      refuseQuery(request);
      // No label check: a name no endpoint could have names no endpoint, so it is 404 like any
      // other unknown one (docs/decisions.md D30); only a PUT, which creates, checks it.
      const { application, endpoint_name: endpointName } = request.params;
      parseStrictJson(await request.body(), {}, { allowEmpty: true });
      const { deps } = request;
      return withConfigLock(deps, async () => {
        const config = deps.getConfig();
        const current = findEndpoint(config, application, endpointName);
        if (!current) throw apiError("managed_endpoint_not_found", `no endpoint ${JSON.stringify(endpointName)} in application ${JSON.stringify(application)}`);
        await refuseActiveBacklog(deps, current.route.path);
        const removed = projectEndpoint(config, current.route);
        await rewriteLabels(deps, [{ routePath: current.route.path, labels: null }]);
        return mappingResult("deleted", true, removed, "delete_endpoint", application, endpointName);
      });
    },
  };
}

function checkedLabels(request: AdminRequest): { application: string; endpoint_name: string } {
  const { application, endpoint_name } = request.params;
  for (const [name, value] of [["application", application], ["endpoint_name", endpoint_name]] as const) {
    if (!isValidLabel(value)) throw apiError("invalid_body", `${name} ${JSON.stringify(value)} must match ${LABEL_PATTERN.source}`);
  }
  return { application, endpoint_name };
}

/** A move keeps the endpoint's contract: the same mode and the same targets. */
function sameDelivery(from: Route, to: Route): boolean {
  return from.mode.kind === to.mode.kind && JSON.stringify(routeTargets(from)) === JSON.stringify(routeTargets(to));
}

/**
 * Queued or leased messages of a route would be stranded outside the endpoint's view by a move or
 * removal (docs/api.md "Admin API"): drain or cancel them first.
 */
async function refuseActiveBacklog(deps: AdminDeps, routePath: string): Promise<void> {
  for (const state of ["queued", "leased"] as const) {
    const [active] = await deps.store.listMessages({ route: routePath, state, limit: 1 });
    if (active) throw apiError("management_route_backlog_active", `route ${routePath} has ${state} messages; drain or cancel them first`);
  }
}

interface LabelEdit {
  routePath: string;
  labels: { application: string; endpointName: string } | null;
}

/**
 * Splices the label statements, writes the file atomically and reloads. If the reload refuses the
 * new text, the previous bytes are written back, so a refused change leaves the file byte-identical
 * and the old config serving.
 */
async function rewriteLabels(deps: AdminDeps, edits: readonly LabelEdit[]): Promise<void> {
  const previousBytes = await readFile(deps.configPath).catch(() => {
    throw apiError("management_apply_failed", `cannot read the config file ${deps.configPath}`);
  });
  const previousText = previousBytes.toString("utf8");
  if (!Buffer.from(previousText, "utf8").equals(previousBytes)) {
    throw apiError("management_apply_failed", `${deps.configPath} is not valid UTF-8; it cannot be rewritten safely`);
  }
  let text = previousText;
  for (const edit of edits) {
    const outcome = setRouteLabels(text, deps.configPath, edit.routePath, edit.labels);
    if (!outcome.ok) {
      throw apiError("management_apply_failed", `cannot edit route ${edit.routePath}: ${outcome.diagnostics.map((d) => d.message).join("; ")}`);
    }
    text = outcome.text;
  }
  // A directory that cannot be written (a read-only mount, a ConfigMap) is an expected refusal, not
  // an internal error: the file and the running config are as they were.
  await writeFileAtomically(deps.configPath, text).catch((error: unknown) => {
    throw apiError("management_apply_failed", `cannot write the config file ${deps.configPath} (${ioReason(error)}); nothing was changed`);
  });
  let detail: string | undefined;
  try {
    const outcome = await deps.applyConfigText(text);
    if (!outcome.ok) detail = outcome.detail;
  } catch {
    detail = "the reload failed";
  }
  if (detail !== undefined) {
    await writeFileAtomically(deps.configPath, previousBytes).catch((error: unknown) => {
      throw apiError(
        "management_apply_failed",
        `the rewritten config was not applied (${detail}), and restoring the previous file failed (${ioReason(error)}): ` +
          `${deps.configPath} holds the refused change while the previous config keeps serving`,
      );
    });
    throw apiError("management_apply_failed", `the rewritten config was not applied and the file was restored: ${detail}`);
  }
}

/** "EACCES: permission denied, open '…'" as Node words it, or the error's text. */
function ioReason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function mappingResult(
  action: MappingAction,
  applied: boolean,
  endpoint: EndpointProjection,
  operation: string,
  application: string,
  endpointName: string,
): MutationResult {
  return {
    body: { applied, action, endpoint },
    metadata: { kind: "config_mutation", operation, mode: "file_rewrite", outcome: action, application, endpoint_name: endpointName, route: endpoint.route },
  };
}
