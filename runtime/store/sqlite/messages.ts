// Message lists and lookups on the SQLite backend. Reads first return expired leases to queued, so
// they show what a dequeue would see.
import { type MessageFilter, type MessageIncludes, type MessageState, type MessageView } from "../records.js";
import { uniqueIds } from "../validate.js";
import type { SqliteContext } from "./context.js";
import { MESSAGE_COLUMNS, selectorWhere, statesWhere, type MessageRow } from "./queries.js";

export function listMessages(cx: SqliteContext, filter: MessageFilter): MessageView[] {
  cx.conn.expireLeases();
  const conditions: string[] = [];
  const params: unknown[] = [];
  if (filter.state !== undefined) statesWhere([filter.state], conditions);
  selectorWhere(filter, conditions, params);
  if (filter.beforeMs !== undefined) conditions.push("received_at < ?"), params.push(filter.beforeMs);
  const include = { payload: filter.includePayload, headers: filter.includeHeaders, trace: filter.includeTrace };
  const where = conditions.length ? `WHERE ${conditions.join(" AND ")}` : "";
  const rows = cx.conn.dynamic
    .get(`SELECT ${columnsFor(include)} FROM messages ${where} ORDER BY received_at DESC, id DESC LIMIT ?`)
    .all(...params, filter.limit) as MessageRow[];
  return rows.map((row) => viewOf(row, include));
}

export function getMessages(cx: SqliteContext, ids: readonly string[], include: MessageIncludes = {}): MessageView[] {
  const unique = uniqueIds(ids, "message");
  cx.conn.expireLeases();
  const rows = cx.conn.dynamic
    .get(`SELECT ${columnsFor(include)} FROM messages WHERE id IN (SELECT value FROM json_each(?))`)
    .all(JSON.stringify(unique)) as MessageRow[];
  const byId = new Map(rows.map((row) => [row.id, row]));
  return unique.filter((id) => byId.has(id)).map((id) => viewOf(byId.get(id)!, include));
}

function columnsFor(include: MessageIncludes): string {
  return MESSAGE_COLUMNS + (include.payload ? ", payload" : "") + (include.headers ? ", headers" : "") + (include.trace ? ", trace" : "");
}

function viewOf(row: MessageRow, include: MessageIncludes): MessageView {
  const view: MessageView = {
    id: row.id,
    route: row.route,
    target: row.target,
    state: row.state as MessageState,
    receivedAtMs: row.received_at,
    attempt: row.attempt,
    nextRunAtMs: row.next_run_at,
    leaseUntilMs: row.lease_until,
    deadReason: row.dead_reason,
  };
  if (include.payload) view.payload = row.payload;
  if (include.headers) view.headers = JSON.parse(row.headers ?? "{}");
  if (include.trace) view.trace = row.trace ? JSON.parse(row.trace) : null;
  return view;
}
