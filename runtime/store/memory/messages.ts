// Reading messages on the memory backend: filtered lists (newest first) and lookups by id. Views
// copy headers and trace, so a caller cannot change what the store holds.
import { matchesSelector } from "../backlog.js";
import type { MessageFilter, MessageIncludes, MessageView } from "../records.js";
import { uniqueIds } from "../validate.js";
import type { MemoryContext } from "./context.js";
import type { Row } from "./table.js";

export function listMessages(cx: MemoryContext, filter: MessageFilter): MessageView[] {
  cx.table.expireLeases(cx.clock.now());
  const found: Row[] = [];
  for (const row of cx.table.rows.values()) {
    if (filter.state !== undefined && row.state !== filter.state) continue;
    if (!matchesSelector(filter, row.route, row.target)) continue;
    if (filter.beforeMs !== undefined && !(row.receivedAtMs < filter.beforeMs)) continue;
    found.push(row);
  }
  found.sort((a, b) => b.receivedAtMs - a.receivedAtMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const include = { payload: filter.includePayload, headers: filter.includeHeaders, trace: filter.includeTrace };
  return found.slice(0, filter.limit).map((row) => viewOf(row, include));
}

/** In the order of `ids` (first occurrence); unknown ids are left out. */
export function getMessages(cx: MemoryContext, ids: readonly string[], include: MessageIncludes): MessageView[] {
  cx.table.expireLeases(cx.clock.now());
  return uniqueIds(ids, "message")
    .map((id) => cx.table.get(id))
    .filter((row): row is Row => row !== undefined)
    .map((row) => viewOf(row, include));
}

function viewOf(row: Row, include: MessageIncludes): MessageView {
  const view: MessageView = {
    id: row.id,
    route: row.route,
    target: row.target,
    state: row.state,
    receivedAtMs: row.receivedAtMs,
    attempt: row.attempt,
    nextRunAtMs: row.nextRunAtMs,
    leaseUntilMs: row.leaseUntilMs,
    deadReason: row.deadReason,
  };
  if (include.payload) view.payload = row.payload;
  if (include.headers) view.headers = { ...row.headers };
  if (include.trace) view.trace = row.trace ? { ...row.trace } : null;
  return view;
}
