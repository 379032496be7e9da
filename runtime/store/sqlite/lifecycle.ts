// Operator repairs on the SQLite store: cancel, requeue and resume by ids or by filter (with
// preview), and deleting dead messages. Each is one immediate transaction.
import type { FilterOutcome, LifecycleFilter, LifecycleOp } from "../records.js";
import { lifecycleStates, uniqueIds } from "../validate.js";
import type { SqliteContext } from "./context.js";
import { selectorWhere, statesWhere } from "./queries.js";

export function changeByIds(cx: SqliteContext, op: LifecycleOp, ids: readonly string[]): number {
  const unique = uniqueIds(ids, "message");
  const conditions = ["id IN (SELECT value FROM json_each(?))"];
  statesWhere(lifecycleStates(op, {}), conditions, true);
  return applyLifecycle(cx, op, conditions, [JSON.stringify(unique)]);
}

export function changeByFilter(cx: SqliteContext, op: LifecycleOp, filter: LifecycleFilter): FilterOutcome {
  const inner: string[] = [];
  const params: unknown[] = [];
  statesWhere(lifecycleStates(op, filter), inner);
  selectorWhere(filter, inner, params);
  if (filter.beforeMs !== undefined) inner.push("received_at < ?"), params.push(filter.beforeMs);
  const select = `SELECT id FROM messages WHERE ${inner.join(" AND ")} ORDER BY received_at, id LIMIT ?`;
  return cx.conn.write(() => {
    cx.conn.sql.expireLeases.run(cx.conn.clock.now());
    const ids = cx.conn.dynamic.get(select).pluck().all(...params, filter.limit) as string[];
    if (filter.previewOnly || ids.length === 0) return { matched: ids.length, changed: 0 };
    const conditions = ["id IN (SELECT value FROM json_each(?))"];
    statesWhere(lifecycleStates(op, filter), conditions, true);
    return { matched: ids.length, changed: applyLifecycle(cx, op, conditions, [JSON.stringify(ids)]) };
  });
}

export function deleteDead(cx: SqliteContext, ids: readonly string[]): number {
  const unique = uniqueIds(ids, "message");
  return cx.conn.write(
    () => cx.conn.dynamic.get("DELETE FROM messages WHERE id IN (SELECT value FROM json_each(?)) AND +state = 'dead'").run(JSON.stringify(unique)).changes,
  );
}

function applyLifecycle(cx: SqliteContext, op: LifecycleOp, conditions: string[], params: unknown[]): number {
  const nowMs = cx.conn.clock.now();
  const where = conditions.join(" AND ");
  // Requeue gives a fresh retry budget; resume continues where the message stopped (docs/decisions.md D25).
  const set =
    op === "cancel"
      ? "state = 'canceled', lease_id = NULL, lease_until = NULL"
      : `state = 'queued', lease_id = NULL, lease_until = NULL, dead_reason = NULL, next_run_at = ?${op === "resume" ? "" : ", attempt = 0"}`;
  const routes = cx.conn.write(() => {
    cx.conn.sql.expireLeases.run(nowMs);
    const setParams = op === "cancel" ? [] : [nowMs];
    return cx.conn.dynamic.get(`UPDATE messages SET ${set} WHERE ${where} RETURNING route`).pluck().all(...setParams, ...params) as string[];
  });
  if (op !== "cancel") for (const route of new Set(routes)) cx.ready.notify(route);
  return routes.length;
}
