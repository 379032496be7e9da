// Reading messages on PostgreSQL: filtered lists (newest first) and lookups by id, with payload,
// headers and trace fetched only when asked for.
import type { MessageFilter, MessageIncludes, MessageView } from "../records.js";
import { uniqueIds } from "../validate.js";
import type { PgContext, Row } from "./context.js";
import * as q from "./queries.js";

export async function listMessages(cx: PgContext, filter: MessageFilter): Promise<MessageView[]> {
  await cx.expireLeases();
  const where = new q.Where();
  if (filter.state !== undefined) where.states([filter.state]);
  where.selector(filter);
  if (filter.beforeMs !== undefined) where.add(`received_at < ${where.param(filter.beforeMs)}`);
  const include = { payload: filter.includePayload, headers: filter.includeHeaders, trace: filter.includeTrace };
  const limit = where.param(filter.limit);
  const rows: Row[] = await cx.sql.unsafe(
    `SELECT ${columnsFor(include)} FROM messages ${where.sql()} ORDER BY received_at DESC, id DESC LIMIT ${limit}`,
    where.params as never[],
    { prepare: true },
  );
  return rows.map((row) => viewOf(row, include));
}

/** In the order of `ids` (first occurrence); unknown ids are left out. */
export async function getMessages(cx: PgContext, ids: readonly string[], include: MessageIncludes): Promise<MessageView[]> {
  const unique = uniqueIds(ids, "message");
  await cx.expireLeases();
  const rows: Row[] = await cx.sql.unsafe(`SELECT ${columnsFor(include)} FROM messages WHERE id = ANY($1::text[])`, [unique], { prepare: true });
  const byId = new Map(rows.map((row) => [row.id as string, row]));
  return unique.filter((id) => byId.has(id)).map((id) => viewOf(byId.get(id)!, include));
}

function columnsFor(include: MessageIncludes): string {
  return q.MESSAGE_COLUMNS + (include.payload ? ", payload" : "") + (include.headers ? ", headers" : "") + (include.trace ? ", trace" : "");
}

function viewOf(row: Row, include: MessageIncludes): MessageView {
  const view: MessageView = {
    id: row.id,
    route: row.route,
    target: row.target,
    state: row.state,
    receivedAtMs: row.received_at,
    attempt: row.attempt,
    nextRunAtMs: row.next_run_at,
    leaseUntilMs: row.lease_until ?? null,
    deadReason: row.dead_reason ?? null,
  };
  if (include.payload) view.payload = row.payload;
  if (include.headers) view.headers = row.headers;
  if (include.trace) view.trace = row.trace ?? null;
  return view;
}
