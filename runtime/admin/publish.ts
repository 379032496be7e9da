// POST /messages/publish (direct) and POST /applications/{a}/endpoints/{e}/messages/publish
// (managed): docs/api.md "Admin API" (publish, endpoint-scoped operations, audit headers);
// docs/decisions.md D29.
//
// The whole batch is preflighted (policy, route, target, payload, headers, duplicate ids within the
// batch and in the store) before one all-or-nothing enqueue, so a refused batch writes nothing and
// names the first offending item.
import type { PublishPolicy, Route } from "../../compiler/ir.js";
import { answerStoreError, ApiError, apiError } from "../errors.js";
import { parseStrictJson } from "../http/json.js";
import type { NewMessage } from "../store/records.js";
import { MAX_ENQUEUE_BATCH } from "../store/store.js";
import type { AuditScope } from "./audit-record.js";
import type { AdminDeps } from "./deps.js";
import { refuseQuery } from "./params.js";
import { buildMessage, resolveTarget } from "./publish-item.js";
import type { AdminRequest, MutationHandler, MutationResult } from "./request.js";
import { SCOPED_SELECTOR_FIELDS, findRoute, isLabelled, requireEndpoint } from "./selectors.js";

const ITEM_FIELDS = {
  id: { type: "string", required: true },
  payload_b64: { type: "string", required: true },
  headers: { type: "string_map" },
  received_at: { type: "string" },
  next_run_at: { type: "string" },
} as const;
const GLOBAL_SCHEMA = {
  items: { type: "object[]", required: true, of: { ...ITEM_FIELDS, route: { type: "string" }, target: { type: "string" } } },
} as const;
// Scoped items carry id, payload_b64 and headers (docs/api.md "Admin API"); route, application and
// endpoint_name are parsed only to be refused with selector_scope_forbidden naming the item, since
// the path decides them. `target` picks one of the endpoint's targets: it is needed where the
// endpoint's route delivers to several (as on global publish), may repeat a single target, and is
// 400 managed_target_mismatch when the endpoint has no such target (docs/api.md "Error catalogue").
// Anything else is an unknown field (invalid_body).
const SCOPED_SCHEMA = {
  items: {
    type: "object[]",
    required: true,
    of: {
      id: ITEM_FIELDS.id,
      payload_b64: ITEM_FIELDS.payload_b64,
      headers: ITEM_FIELDS.headers,
      route: { type: "string" },
      target: { type: "string" },
      application: { type: "string" },
      endpoint_name: { type: "string" },
    },
  },
} as const;

export const PUBLISH_TOOL = "messages_publish";

export function globalPublish(): MutationHandler {
  return {
    tool: PUBLISH_TOOL,
    async run(request) {
      refuseQuery(request);
      const policy = request.config.defaults.publishPolicy;
      if (!policy.direct) throw apiError("global_publish_disabled", "publish_policy.direct is off");
      const { items } = parseStrictJson(await request.body(), GLOBAL_SCHEMA);
      checkBatchSize(items.length);
      const nowMs = request.deps.clock.now();
      const messages = items.map((item, index) => {
        const route = globalRoute(request, item.route, index);
        checkRouteModePolicy(route, policy, index);
        return buildMessage(item, route, resolveTarget(route, item.target, index), index, nowMs);
      });
      return publishBatch(request.deps, withRequestTrace(request, messages), "direct", undefined);
    },
  };
}

export function scopedPublish(): MutationHandler {
  return {
    tool: PUBLISH_TOOL,
    async run(request) {
      refuseQuery(request);
      const endpoint = requireEndpoint(request.config, request.params.application, request.params.endpoint_name);
      const { route } = endpoint;
      const policy = request.config.defaults.publishPolicy;
      if (!policy.managed) throw apiError("scoped_publish_disabled", "publish_policy.managed is off");
      if (!route.publish.enabled) throw apiError("route_publish_disabled", `route ${route.path} has publish off`);
      if (!route.publish.managed) throw apiError("scoped_publish_disabled", `route ${route.path} has publish.managed off`);
      checkRouteModePolicy(route, policy, undefined);
      const { items } = parseStrictJson(await request.body(), SCOPED_SCHEMA);
      checkBatchSize(items.length);
      const nowMs = request.deps.clock.now();
      const messages = items.map((item, index) => {
        refuseSelectorFields(item, index);
        return buildMessage(item, route, resolveTarget(route, item.target, index, "managed_target_mismatch"), index, nowMs);
      });
      const scope = { application: endpoint.application, endpoint_name: endpoint.endpointName, route: route.path };
      return publishBatch(request.deps, withRequestTrace(request, messages), "managed", scope);
    },
  };
}

function refuseSelectorFields(item: Record<string, unknown>, itemIndex: number): void {
  for (const [field, detail] of Object.entries(SCOPED_SELECTOR_FIELDS)) {
    if (item[field] !== undefined) throw apiError("selector_scope_forbidden", detail, { itemIndex });
  }
}

function checkBatchSize(count: number): void {
  if (count < 1 || count > MAX_ENQUEUE_BATCH) {
    throw apiError("invalid_body", `items must hold 1 to ${MAX_ENQUEUE_BATCH} messages, got ${count}`);
  }
}

/** Rules 1, 3 and 6 for one item of a global batch. */
function globalRoute(request: AdminRequest, path: string | undefined, itemIndex: number): Route {
  const at = { itemIndex };
  if (path === undefined) throw apiError("invalid_body", "route is required for global publish", at);
  if (!path.startsWith("/")) throw apiError("invalid_body", `route must start with "/", got ${JSON.stringify(path)}`, at);
  const route = findRoute(request.config, path);
  if (!route) throw apiError("route_not_found", `no route ${path} is configured`, at);
  if (isLabelled(route)) {
    throw apiError(
      "scoped_publish_required",
      `route ${path} is managed as ${route.application}/${route.endpointName}: publish through /applications/${route.application}/endpoints/${route.endpointName}/messages/publish`,
      at,
    );
  }
  if (!route.publish.enabled) throw apiError("route_publish_disabled", `route ${path} has publish off`, at);
  if (!route.publish.direct) throw apiError("route_publish_disabled", `route ${path} has publish.direct off`, at);
  return route;
}

function checkRouteModePolicy(route: Route, policy: PublishPolicy, itemIndex: number | undefined): void {
  const at = itemIndex === undefined ? {} : { itemIndex };
  if (route.mode.kind === "pull" && !policy.allowPullRoutes) {
    throw apiError("pull_route_publish_disabled", `publish_policy.allow_pull_routes is off and ${route.path} is a pull route`, at);
  }
  if (route.mode.kind === "deliver" && !policy.allowDeliverRoutes) {
    throw apiError("deliver_route_publish_disabled", `publish_policy.allow_deliver_routes is off and ${route.path} is a deliver route`, at);
  }
}

/**
 * With tracing on, published messages carry the publishing request's span context, as ingress stores
 * its own: their push attempts continue the Admin API call's trace (docs/operations.md "Tracing").
 */
function withRequestTrace(request: AdminRequest, messages: NewMessage[]): NewMessage[] {
  const trace = request.trace;
  return trace ? messages.map((message) => ({ ...message, trace })) : messages;
}

async function publishBatch(deps: AdminDeps, messages: NewMessage[], mode: "direct" | "managed", scope: AuditScope | undefined): Promise<MutationResult> {
  const firstIndex = new Map<string, number>();
  messages.forEach((message, index) => {
    const earlier = firstIndex.get(message.id);
    if (earlier !== undefined) {
      throw apiError("duplicate_id", `id ${JSON.stringify(message.id)} appears twice in the batch (items ${earlier} and ${index})`, { itemIndex: index });
    }
    firstIndex.set(message.id, index);
  });
  // Checked here too (the store also refuses duplicates atomically) so the answer names the item
  // without relying on the backend's error detail.
  const existing = await deps.store.getMessages([...firstIndex.keys()]).catch((error: unknown) => {
    throw answerStoreError(error, "admin");
  });
  if (existing.length > 0) {
    const index = Math.min(...existing.map((view) => firstIndex.get(view.id) ?? Infinity));
    throw apiError("duplicate_id", `message id ${JSON.stringify(messages[index].id)} already exists`, { itemIndex: index });
  }
  try {
    await deps.store.enqueue(messages);
  } catch (error) {
    throw answerStoreError(error, "admin");
  }
  const count = messages.length;
  deps.metrics?.publish.accepted.inc(count);
  if (mode === "managed") deps.metrics?.publish.scopedAccepted.inc(count);
  const body: Record<string, unknown> = { published: count, ids: messages.map((m) => m.id) };
  if (scope) body.scope = scope;
  return { body, metadata: { kind: "publish", operation: PUBLISH_TOOL, mode, items: count, published: count, ...(scope ? { scope } : {}) } };
}

const POLICY_CODES = new Set([
  "global_publish_disabled",
  "route_publish_disabled",
  "scoped_publish_disabled",
  "scoped_publish_required",
  "selector_scope_forbidden",
  "pull_route_publish_disabled",
  "deliver_route_publish_disabled",
  "audit_reason_required",
  "audit_actor_required",
  "audit_actor_not_allowed",
  "audit_request_id_required",
]);
const STORE_CODES = new Set(["store_unavailable", "memory_pressure", "internal_error"]);

/** spool_publish_rejected_* by the kind of refusal (docs/operations.md "Metrics"). */
export function countPublishRefusal(deps: AdminDeps, error: ApiError, scoped: boolean): void {
  const publish = deps.metrics?.publish;
  if (!publish) return;
  publish.rejected.inc();
  if (scoped) publish.scopedRejected.inc();
  if (error.code === "duplicate_id") publish.rejectedConflict.inc();
  else if (error.code === "queue_full") publish.rejectedQueueFull.inc();
  else if (POLICY_CODES.has(error.code)) publish.rejectedPolicy.inc();
  else if (STORE_CODES.has(error.code)) publish.rejectedStore.inc();
  else publish.rejectedValidation.inc();
}
