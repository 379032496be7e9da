// The queue tools (docs/mcp.md "Tools"): each one Admin API operation, run on the SQLite file or
// asked of the running instance (context.ts), its answer the Admin API's body.
import { MESSAGE_STATES } from "../../runtime/store/records.js";
import { checkInstant, checkSelector } from "./args.js";
import type { AdminCallSpec, CallAudit, CallContext } from "./context.js";
import { AUDIT, LIST, SELECTOR, bool, int, object, str } from "./schema.js";
import { ToolError, type Args, type ToolDef } from "./tool.js";

const TARGET = { target: str("Delivery target (a URL or exec name)", { minLength: 1 }) };
const BACKLOG = { route: SELECTOR.route, ...TARGET, limit: LIST.limit };

function readTool(name: string, description: string, properties: Parameters<typeof object>[0], call: (args: Args) => AdminCallSpec, check?: (args: Args) => void): ToolDef {
  return {
    name,
    description,
    role: "read",
    mutating: false,
    input: object(properties),
    check(args) {
      checkSelector(args);
      for (const key of ["before", "until"]) checkInstant(args, key);
      check?.(args);
    },
    run: async (args, ctx) => ({ result: await ctx.admin(call(args)) }),
  };
}

const pick = (args: Args, keys: readonly string[]) => Object.fromEntries(keys.filter((k) => args[k] !== undefined).map((k) => [k, args[k] as string | number | boolean]));

export const QUEUE_READ_TOOLS: ToolDef[] = [
  readTool("management_model", "The managed applications and endpoints (Admin GET /management/model)", {}, () => ({ method: "GET", path: "/management/model" })),
  readTool("dlq_list", "Dead letters, newest first (Admin GET /dlq)", { route: SELECTOR.route, ...TARGET, ...LIST }, (args) => ({ method: "GET", path: "/dlq", query: pick(args, ["route", "target", ...Object.keys(LIST)]) })),
  readTool(
    "messages_list",
    "Messages by route or managed endpoint, state and target (Admin GET /messages)",
    { ...SELECTOR, ...TARGET, state: str("Message state", { enum: MESSAGE_STATES }), ...LIST },
    (args) => ({ method: "GET", path: "/messages", query: pick(args, ["route", "application", "endpoint_name", "target", "state", ...Object.keys(LIST)]) }),
  ),
  readTool(
    "attempts_list",
    "Delivery attempts (Admin GET /attempts)",
    { ...SELECTOR, ...TARGET, event_id: str("Message id", { minLength: 1 }), outcome: str("Attempt outcome", { enum: ["acked", "retry", "dead"] }), limit: LIST.limit, before: LIST.before },
    (args) => ({ method: "GET", path: "/attempts", query: pick(args, ["route", "application", "endpoint_name", "target", "event_id", "outcome", "limit", "before"]) }),
  ),
  readTool("backlog_top_queued", "Queued messages by route and target, largest first (Admin GET /backlog/top_queued)", BACKLOG, (args) => ({
    method: "GET",
    path: "/backlog/top_queued",
    query: pick(args, ["route", "target", "limit"]),
  })),
  readTool("backlog_oldest_queued", "The oldest queued messages (Admin GET /backlog/oldest_queued)", BACKLOG, (args) => ({
    method: "GET",
    path: "/backlog/oldest_queued",
    query: pick(args, ["route", "target", "limit"]),
  })),
  readTool(
    "backlog_aging_summary",
    "Backlog age by route and target (Admin GET /backlog/aging_summary)",
    { ...BACKLOG, states: { type: "array", description: "States to count (default all)", items: str("State", { enum: ["queued", "leased", "dead"] }), minItems: 1, maxItems: 3 } },
    (args) => ({
      method: "GET",
      path: "/backlog/aging_summary",
      query: { ...pick(args, ["route", "target", "limit"]), states: Array.isArray(args.states) ? (args.states as string[]).join(",") : undefined },
    }),
  ),
  readTool(
    "backlog_trends",
    "Backlog over time with trend signals (Admin GET /backlog/trends)",
    { route: SELECTOR.route, ...TARGET, window: str("Window, e.g. 1h (at most 168h)"), step: str("Step, e.g. 5m (1m..1h)"), until: str("End, RFC 3339 (default now)") },
    (args) => ({ method: "GET", path: "/backlog/trends", query: pick(args, ["route", "target", "window", "step", "until"]) }),
  ),
];

const ID_TOOLS = [
  ["dlq_requeue", "/dlq/requeue", "requeued", "Requeue dead letters by id"],
  ["dlq_delete", "/dlq/delete", "deleted", "Delete dead letters by id"],
  ["messages_cancel", "/messages/cancel", "canceled", "Cancel messages by id"],
  ["messages_requeue", "/messages/requeue", "requeued", "Requeue dead or canceled messages by id"],
  ["messages_resume", "/messages/resume", "resumed", "Resume canceled messages by id"],
] as const;

function idTool([name, path, countField, description]: (typeof ID_TOOLS)[number]): ToolDef {
  return {
    name,
    description: `${description} (Admin POST ${path})`,
    role: "operate",
    gate: "mutations",
    mutating: true,
    input: object({ ids: { type: "array", description: "Message ids (1..1000)", items: str("Message id", { minLength: 1 }), minItems: 1, maxItems: 1000 }, ...AUDIT }, ["ids", "reason"]),
    async run(args, ctx) {
      const ids = args.ids as string[];
      const body = await ctx.admin({ method: "POST", path, body: { ids }, audit: ctx.audit });
      const changed = Number(body[countField] ?? 0);
      return {
        result: { [countField]: changed, audit: ctx.auditResult() },
        metadata: { kind: "id_mutation", operation: name, ids_requested: ids.length, ids_unique: new Set(ids).size, changed },
      };
    },
  };
}

function filterTool(op: "cancel" | "requeue" | "resume", states: readonly string[]): ToolDef {
  const name = `messages_${op}_by_filter`;
  return {
    name,
    description: `${op[0].toUpperCase()}${op.slice(1)} the messages a filter selects; preview_only counts them (Admin POST /messages/${op}_by_filter)`,
    role: "operate",
    gate: "mutations",
    mutating: true,
    input: object(
      { ...SELECTOR, ...TARGET, state: str(`State (${states.join(", ")})`, { enum: states }), before: LIST.before, limit: LIST.limit, preview_only: bool("Count only, change nothing"), ...AUDIT },
      ["reason"],
    ),
    check(args) {
      checkSelector(args);
      checkInstant(args, "before");
    },
    async run(args, ctx) {
      const body = await ctx.admin({ method: "POST", path: `/messages/${op}_by_filter`, body: pick(args, ["route", "application", "endpoint_name", "target", "state", "before", "limit", "preview_only"]), audit: ctx.audit });
      const matched = Number(body.matched ?? 0);
      const changed = Number(body.changed ?? 0);
      const previewOnly = body.preview_only === true;
      const result: Record<string, unknown> = { matched, changed, preview_only: previewOnly, audit: ctx.auditResult() };
      if (body.scope !== undefined) result.scope = body.scope;
      return { result, metadata: { kind: "filter_mutation", operation: `${op}_by_filter`, matched, changed, preview_only: previewOnly } };
    },
  };
}

const PUBLISH_ITEM = object(
  {
    id: str("Message id", { minLength: 1 }),
    payload_b64: str("Payload, base64"),
    ...SELECTOR,
    ...TARGET,
    headers: { type: "object", description: "Headers to store", properties: {}, additionalProperties: { type: "string" } },
    received_at: str("RFC 3339"),
    next_run_at: str("RFC 3339"),
  },
  ["id", "payload_b64"],
);

const publishTool: ToolDef = {
  name: "messages_publish",
  description: "Publish messages to a route, or to one managed endpoint (Admin POST …/messages/publish); all or nothing",
  role: "operate",
  gate: "mutations",
  mutating: true,
  input: object({ items: { type: "array", description: "1..1000 messages, one selector mode per call", items: PUBLISH_ITEM, minItems: 1, maxItems: 1000 }, ...AUDIT }, ["items", "reason"]),
  check(args) {
    const items = args.items as Args[];
    items.forEach((item, index) => {
      checkSelector(item, `items[${index}]`);
      for (const key of ["received_at", "next_run_at"]) {
        const value = item[key];
        if (value !== undefined) checkInstant({ [`items[${index}].${key}`]: value }, `items[${index}].${key}`);
      }
    });
    const modes = new Set(items.map((item) => (item.application !== undefined ? `${item.application}/${item.endpoint_name}` : "route")));
    if (modes.size > 1) throw new ToolError('argument "items" mixes selector modes: give every item a route, or every item the same application+endpoint_name');
  },
  async run(args, ctx) {
    const items = args.items as Args[];
    const first = items[0];
    const scoped = first.application !== undefined;
    const path = scoped
      ? `/applications/${encodeURIComponent(String(first.application))}/endpoints/${encodeURIComponent(String(first.endpoint_name))}/messages/publish`
      : "/messages/publish";
    const sent = scoped ? items.map(({ application: _a, endpoint_name: _e, ...rest }) => rest) : items;
    const body = await ctx.admin({ method: "POST", path, body: { items: sent }, audit: ctx.audit });
    const published = Number(body.published ?? 0);
    const result: Record<string, unknown> = { published, ids: body.ids ?? items.map((item) => item.id), audit: ctx.auditResult() };
    if (body.scope !== undefined) result.scope = body.scope;
    return { result, metadata: { kind: "publish", operation: "messages_publish", items: items.length, published } };
  },
};

export const QUEUE_MUTATION_TOOLS: ToolDef[] = [
  ...ID_TOOLS.map(idTool),
  publishTool,
  filterTool("cancel", ["queued", "leased", "dead"]),
  filterTool("requeue", ["dead", "canceled"]),
  filterTool("resume", ["canceled"]),
];

export type { CallAudit };
