// GET /messages, GET /dlq, GET /attempts and the endpoint-scoped message list
// (docs/api.md "Admin API", reads).
import type { AttemptOutcome, MessageFilter, MessageState } from "../store/records.js";
import { QueryReader, invalidQuery } from "./params.js";
import type { AdminRequest } from "./request.js";
import { SCOPED_SELECTOR_FIELDS, chooseSelector, requireEndpoint, selectedRoute } from "./selectors.js";
import { attemptItem, deadLetterItem, messageItem } from "./views.js";

const INCLUDE_FLAGS = ["include_payload", "include_headers", "include_trace"] as const;
const MESSAGE_QUERY = ["route", "application", "endpoint_name", "target", "state", "limit", "before", ...INCLUDE_FLAGS];
const SCOPED_MESSAGE_QUERY = ["target", "state", "limit", "before", ...INCLUDE_FLAGS];
const DLQ_QUERY = ["route", "target", "limit", "before", ...INCLUDE_FLAGS];
const ATTEMPT_QUERY = ["route", "application", "endpoint_name", "target", "event_id", "outcome", "limit", "before"];
const ATTEMPT_OUTCOMES: readonly AttemptOutcome[] = ["acked", "retry", "dead"];

export async function listMessages(request: AdminRequest): Promise<unknown> {
  const query = new QueryReader(request.query, MESSAGE_QUERY);
  const choice = chooseSelector(
    request.config,
    { route: query.route(), application: query.string("application"), endpoint_name: query.string("endpoint_name") },
    invalidQuery,
  );
  return listFor(request, query, selectedRoute(choice));
}

export async function listScopedMessages(request: AdminRequest): Promise<unknown> {
  const query = new QueryReader(request.query, SCOPED_MESSAGE_QUERY, SCOPED_SELECTOR_FIELDS);
  const endpoint = requireEndpoint(request.config, request.params.application, request.params.endpoint_name);
  return listFor(request, query, endpoint.route.path);
}

async function listFor(request: AdminRequest, query: QueryReader, route: string | undefined): Promise<unknown> {
  const views = await request.deps.store.listMessages(messageFilter(query, route, () => query.state()));
  return { items: views.map(messageItem) };
}

export async function listDeadLetters(request: AdminRequest): Promise<unknown> {
  const query = new QueryReader(request.query, DLQ_QUERY);
  const views = await request.deps.store.listMessages(messageFilter(query, query.route(), () => "dead"));
  return { items: views.map(deadLetterItem) };
}

/** The filter of a message listing; query values are read (and refused) in parameter order. */
function messageFilter(query: QueryReader, route: string | undefined, state: () => MessageState | undefined): MessageFilter {
  return {
    route,
    target: query.string("target"),
    state: state(),
    beforeMs: query.instant("before", "up"),
    limit: query.limit(),
    includePayload: query.flag("include_payload"),
    includeHeaders: query.flag("include_headers"),
    includeTrace: query.flag("include_trace"),
  };
}

export async function listAttempts(request: AdminRequest): Promise<unknown> {
  const query = new QueryReader(request.query, ATTEMPT_QUERY);
  const choice = chooseSelector(
    request.config,
    { route: query.route(), application: query.string("application"), endpoint_name: query.string("endpoint_name") },
    invalidQuery,
  );
  const records = await request.deps.store.listAttempts({
    route: selectedRoute(choice),
    target: query.string("target"),
    messageId: query.string("event_id"),
    outcome: query.oneOf("outcome", ATTEMPT_OUTCOMES),
    beforeMs: query.instant("before", "up"),
    limit: query.limit(),
  });
  return { items: records.map(attemptItem) };
}
