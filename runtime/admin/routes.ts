// The Admin route table: path pattern → handler per method. A known path with an unknown method is
// 405 method_not_allowed with `Allow` (docs/api.md "Admin API"); an unknown path is left to the app (404).
import { agingSummary, oldestQueued, topQueued, trends } from "./backlog.js";
import { globalFilterMutation, idMutation, scopedFilterMutation } from "./lifecycle.js";
import { deleteEndpointMapping, putEndpointMapping } from "./management-write.js";
import { getApplicationEndpoints, getApplications, getEndpoint, getModel } from "./management-model.js";
import { globalPublish, scopedPublish } from "./publish.js";
import { listAttempts, listDeadLetters, listMessages, listScopedMessages } from "./queue-reads.js";
import type { MutationHandler, ReadHandler } from "./request.js";
import { addSecretVersion, deleteSecretVersion, listSecretVersions } from "./secrets.js";
import { isValidLabel } from "../../compiler/index.js";

export type Method = "GET" | "POST" | "PUT" | "DELETE";

export interface RouteEntry {
  /** Segments; `:name` captures one decoded segment. */
  pattern: readonly string[];
  /** Captured segments that must be labels; another value is no match (404 not_found). */
  labels?: readonly string[];
  methods: Partial<Record<Method, { read: ReadHandler } | { mutation: MutationHandler; scopedPublish?: boolean; publish?: boolean }>>;
}

const read = (handler: ReadHandler) => ({ read: handler });
const mutate = (handler: MutationHandler, flags: { publish?: boolean; scopedPublish?: boolean } = {}) => ({ mutation: handler, ...flags });
const split = (path: string) => path.split("/").slice(1);
const SCOPE = "/applications/:application/endpoints/:endpoint_name";

export const ADMIN_ROUTES: readonly RouteEntry[] = [
  { pattern: split("/messages"), methods: { GET: read(listMessages) } },
  { pattern: split("/messages/publish"), methods: { POST: mutate(globalPublish(), { publish: true }) } },
  { pattern: split("/messages/cancel"), methods: { POST: mutate(idMutation("messages_cancel")) } },
  { pattern: split("/messages/requeue"), methods: { POST: mutate(idMutation("messages_requeue")) } },
  { pattern: split("/messages/resume"), methods: { POST: mutate(idMutation("messages_resume")) } },
  { pattern: split("/messages/cancel_by_filter"), methods: { POST: mutate(globalFilterMutation("cancel")) } },
  { pattern: split("/messages/requeue_by_filter"), methods: { POST: mutate(globalFilterMutation("requeue")) } },
  { pattern: split("/messages/resume_by_filter"), methods: { POST: mutate(globalFilterMutation("resume")) } },
  { pattern: split("/dlq"), methods: { GET: read(listDeadLetters) } },
  { pattern: split("/dlq/requeue"), methods: { POST: mutate(idMutation("dlq_requeue")) } },
  { pattern: split("/dlq/delete"), methods: { POST: mutate(idMutation("dlq_delete")) } },
  { pattern: split("/attempts"), methods: { GET: read(listAttempts) } },
  { pattern: split("/backlog/top_queued"), methods: { GET: read(topQueued) } },
  { pattern: split("/backlog/oldest_queued"), methods: { GET: read(oldestQueued) } },
  { pattern: split("/backlog/aging_summary"), methods: { GET: read(agingSummary) } },
  { pattern: split("/backlog/trends"), methods: { GET: read(trends) } },
  { pattern: split("/management/model"), methods: { GET: read(getModel) } },
  { pattern: split("/applications"), methods: { GET: read(getApplications) } },
  { pattern: split("/applications/:application/endpoints"), methods: { GET: read(getApplicationEndpoints) } },
  {
    pattern: split(SCOPE),
    methods: { GET: read(getEndpoint), PUT: mutate(putEndpointMapping()), DELETE: mutate(deleteEndpointMapping()) },
  },
  { pattern: split(`${SCOPE}/messages`), methods: { GET: read(listScopedMessages) } },
  { pattern: split(`${SCOPE}/messages/publish`), methods: { POST: mutate(scopedPublish(), { publish: true, scopedPublish: true }) } },
  { pattern: split(`${SCOPE}/messages/cancel_by_filter`), methods: { POST: mutate(scopedFilterMutation("cancel")) } },
  { pattern: split(`${SCOPE}/messages/requeue_by_filter`), methods: { POST: mutate(scopedFilterMutation("requeue")) } },
  { pattern: split(`${SCOPE}/messages/resume_by_filter`), methods: { POST: mutate(scopedFilterMutation("resume")) } },
  { pattern: split("/secrets/:name"), labels: ["name"], methods: { GET: read(listSecretVersions), POST: mutate(addSecretVersion()) } },
  { pattern: split("/secrets/:name/:id"), labels: ["name", "id"], methods: { DELETE: mutate(deleteSecretVersion()) } },
];

export interface RouteMatch {
  entry: RouteEntry;
  params: Record<string, string>;
}

/** Undefined when no pattern matches, including a segment that is not valid percent-encoding. */
export function matchRoute(pathname: string, routes: readonly RouteEntry[] = ADMIN_ROUTES): RouteMatch | undefined {
  if (!pathname.startsWith("/")) return undefined;
  const segments = split(pathname);
  for (const entry of routes) {
    if (entry.pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let matched = true;
    for (let i = 0; i < segments.length && matched; i++) {
      const expected = entry.pattern[i];
      if (expected.startsWith(":")) {
        const decoded = decodeSegment(segments[i]);
        if (decoded === undefined || decoded === "") matched = false;
        else params[expected.slice(1)] = decoded;
      } else if (expected !== segments[i]) {
        matched = false;
      }
    }
    if (matched && entry.labels?.some((name) => !isValidLabel(params[name]))) matched = false;
    if (matched) return { entry, params };
  }
  return undefined;
}

function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
