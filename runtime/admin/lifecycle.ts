// By-ID and filter lifecycle mutations (docs/api.md "Admin API";
// docs/decisions.md D25, D30).
import { parseStrictJson } from "../http/json.js";
import { LIFECYCLE_FROM_STATES, type LifecycleOp, type MessageState } from "../store/records.js";
import { MAX_IDS_PER_CALL, MAX_LIST_LIMIT } from "../store/store.js";
import { apiError } from "../errors.js";
import type { AuditScope } from "./audit-record.js";
import { DEFAULT_LIST_LIMIT, parseRfc3339Ms, refuseQuery } from "./params.js";
import type { AdminRequest, MutationHandler } from "./request.js";
import { SCOPED_SELECTOR_FIELDS, chooseSelector, enforceManagedSelector, requireEndpoint, selectedRoute, type ManagedEndpoint } from "./selectors.js";

const IDS_SCHEMA = { ids: { type: "string[]", required: true } } as const;

type IdOperation = { op: LifecycleOp | "dlq_delete"; countField: "requeued" | "deleted" | "canceled" | "resumed" };

export const ID_OPERATIONS = {
  dlq_requeue: { op: "dlq_requeue", countField: "requeued" },
  dlq_delete: { op: "dlq_delete", countField: "deleted" },
  messages_cancel: { op: "cancel", countField: "canceled" },
  messages_requeue: { op: "requeue", countField: "requeued" },
  messages_resume: { op: "resume", countField: "resumed" },
} as const satisfies Record<string, IdOperation>;

/** `{ids:[…]}` (1..1000, none empty; duplicates merged) → `{<count field>: N, audit}` (docs/api.md "Admin API"). */
export function idMutation(tool: keyof typeof ID_OPERATIONS): MutationHandler {
  const operation: IdOperation = ID_OPERATIONS[tool];
  return {
    tool,
    async run(request) {
      refuseQuery(request);
      const { ids } = parseStrictJson(await request.body(), IDS_SCHEMA);
      if (ids.length === 0 || ids.length > MAX_IDS_PER_CALL) {
        throw apiError("invalid_body", `ids must hold 1 to ${MAX_IDS_PER_CALL} message ids, got ${ids.length}`);
      }
      const emptyAt = ids.findIndex((id) => id.trim() === "");
      if (emptyAt >= 0) throw apiError("invalid_body", `ids[${emptyAt}] is empty`, { itemIndex: emptyAt });
      const unique = [...new Set(ids)];
      const store = request.deps.store;
      const changed = operation.op === "dlq_delete" ? await store.deleteDead(unique) : await store.changeByIds(operation.op, unique);
      return {
        body: { [operation.countField]: changed },
        metadata: { kind: "id_mutation", operation: tool, ids_requested: ids.length, ids_unique: unique.length, changed },
      };
    },
  };
}

const FILTER_FIELDS = {
  target: { type: "string" },
  state: { type: "string" },
  before: { type: "string" },
  limit: { type: "integer" },
  preview_only: { type: "boolean" },
} as const;
const GLOBAL_FILTER_SCHEMA = {
  ...FILTER_FIELDS,
  route: { type: "string" },
  application: { type: "string" },
  endpoint_name: { type: "string" },
} as const;

export type FilterOp = "cancel" | "requeue" | "resume";

/** Global `POST /messages/<op>_by_filter` with the managed-selector rules. */
export function globalFilterMutation(op: FilterOp): MutationHandler {
  return {
    tool: `messages_${op}_by_filter`,
    async run(request) {
      refuseQuery(request);
      const body = parseStrictJson(await request.body(), GLOBAL_FILTER_SCHEMA);
      const filter = decodeFilter(op, body);
      const choice = chooseSelector(request.config, body, (detail) => apiError("invalid_body", detail));
      enforceManagedSelector(request.config, choice);
      const scope = choice.kind === "managed" ? scopeOf(choice.endpoint) : undefined;
      return runFilter(request, op, filter, selectedRoute(choice), scope);
    },
  };
}

/** `POST /applications/{a}/endpoints/{e}/messages/<op>_by_filter`: the path is the selector. */
export function scopedFilterMutation(op: FilterOp): MutationHandler {
  return {
    tool: `messages_${op}_by_filter`,
    async run(request) {
      refuseQuery(request);
      const body = parseStrictJson(await request.body(), GLOBAL_FILTER_SCHEMA);
      for (const field of ["route", "application", "endpoint_name"] as const) {
        if (body[field] !== undefined) throw apiError("selector_scope_forbidden", SCOPED_SELECTOR_FIELDS[field]);
      }
      const filter = decodeFilter(op, body);
      const endpoint = requireEndpoint(request.config, request.params.application, request.params.endpoint_name);
      return runFilter(request, op, filter, endpoint.route.path, scopeOf(endpoint));
    },
  };
}

interface DecodedFilter {
  target?: string;
  state?: MessageState;
  beforeMs?: number;
  limit: number;
  previewOnly: boolean;
}

function decodeFilter(op: FilterOp, body: { target?: string; state?: string; before?: string; limit?: number; preview_only?: boolean }): DecodedFilter {
  const allowed = LIFECYCLE_FROM_STATES[op];
  if (body.state !== undefined && !(allowed as readonly string[]).includes(body.state)) {
    throw apiError("invalid_body", `state for ${op}_by_filter must be one of ${allowed.join(", ")}, got ${JSON.stringify(body.state)}`);
  }
  let beforeMs: number | undefined;
  if (body.before !== undefined) {
    beforeMs = parseRfc3339Ms(body.before, "up");
    if (beforeMs === undefined) throw apiError("invalid_body", `before must be an RFC 3339 timestamp, got ${JSON.stringify(body.before)}`);
  }
  const limit = body.limit ?? DEFAULT_LIST_LIMIT;
  if (limit < 1 || limit > MAX_LIST_LIMIT) throw apiError("invalid_body", `limit must be from 1 to ${MAX_LIST_LIMIT}, got ${limit}`);
  if (body.target === "") throw apiError("invalid_body", "target must not be empty");
  return { target: body.target, state: body.state as MessageState | undefined, beforeMs, limit, previewOnly: body.preview_only ?? false };
}

async function runFilter(request: AdminRequest, op: FilterOp, filter: DecodedFilter, route: string | undefined, scope: AuditScope | undefined) {
  const outcome = await request.deps.store.changeByFilter(op, {
    route,
    target: filter.target,
    state: filter.state,
    beforeMs: filter.beforeMs,
    limit: filter.limit,
    previewOnly: filter.previewOnly,
  });
  const body: Record<string, unknown> = { matched: outcome.matched, changed: outcome.changed, preview_only: filter.previewOnly };
  if (scope) body.scope = scope;
  return {
    body,
    metadata: {
      kind: "filter_mutation" as const,
      operation: `${op}_by_filter`,
      matched: outcome.matched,
      changed: outcome.changed,
      preview_only: filter.previewOnly,
      ...(scope ? { scope } : {}),
    },
  };
}

function scopeOf(endpoint: ManagedEndpoint): AuditScope {
  return { application: endpoint.application, endpoint_name: endpoint.endpointName, route: endpoint.route.path };
}


