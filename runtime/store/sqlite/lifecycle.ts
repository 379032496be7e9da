// Operator repairs on the SQLite store: cancel, requeue and resume by ids or by filter (with
// preview), and deleting dead messages. Each is one immediate transaction.
import type { ReadySignal } from "../ready-signal.js";
import type { FilterOutcome, LifecycleFilter, LifecycleOp } from "../records.js";
import { lifecycleStates, uniqueIds, validateLimit } from "../validate.js";
import type { SqliteConnection } from "./connection.js";
import { selectorWhere, statesWhere } from "./queries.js";

export class SqliteLifecycle {
  constructor(
    private readonly conn: SqliteConnection,
    private readonly ready: ReadySignal,
  ) {}

  changeByIds(op: LifecycleOp, ids: readonly string[]): number {
    const unique = uniqueIds(ids, "message");
    const conditions = ["id IN (SELECT value FROM json_each(?))"];
    statesWhere(lifecycleStates(op, {}), conditions, true);
    return this.applyLifecycle(op, conditions, [JSON.stringify(unique)]);
  }

  changeByFilter(op: LifecycleOp, filter: LifecycleFilter): FilterOutcome {
    validateLimit(filter.limit);
    const inner: string[] = [];
    const params: unknown[] = [];
    statesWhere(lifecycleStates(op, filter), inner);
    selectorWhere(filter, inner, params);
    if (filter.beforeMs !== undefined) inner.push("received_at < ?"), params.push(filter.beforeMs);
    const select = `SELECT id FROM messages WHERE ${inner.join(" AND ")} ORDER BY received_at, id LIMIT ?`;
    return this.conn.write(() => {
      this.conn.sql.expireLeases.run(this.conn.clock.now());
      const ids = this.conn.dynamic.get(select).pluck().all(...params, filter.limit) as string[];
      if (filter.previewOnly || ids.length === 0) return { matched: ids.length, changed: 0 };
      const conditions = ["id IN (SELECT value FROM json_each(?))"];
      statesWhere(lifecycleStates(op, filter), conditions, true);
      return { matched: ids.length, changed: this.applyLifecycle(op, conditions, [JSON.stringify(ids)]) };
    });
  }

  deleteDead(ids: readonly string[]): number {
    const unique = uniqueIds(ids, "message");
    return this.conn.write(
      () => this.conn.dynamic.get("DELETE FROM messages WHERE id IN (SELECT value FROM json_each(?)) AND +state = 'dead'").run(JSON.stringify(unique)).changes,
    );
  }

  private applyLifecycle(op: LifecycleOp, conditions: string[], params: unknown[]): number {
    const nowMs = this.conn.clock.now();
    const where = conditions.join(" AND ");
    // Requeue gives a fresh retry budget; resume continues where the message stopped (§2 row 19).
    const set =
      op === "cancel"
        ? "state = 'canceled', lease_id = NULL, lease_until = NULL"
        : `state = 'queued', lease_id = NULL, lease_until = NULL, dead_reason = NULL, next_run_at = ?${op === "resume" ? "" : ", attempt = 0"}`;
    const routes = this.conn.write(() => {
      this.conn.sql.expireLeases.run(nowMs);
      const setParams = op === "cancel" ? [] : [nowMs];
      return this.conn.dynamic.get(`UPDATE messages SET ${set} WHERE ${where} RETURNING route`).pluck().all(...setParams, ...params) as string[];
    });
    if (op !== "cancel") for (const route of new Set(routes)) this.ready.notify(route);
    return routes.length;
  }
}
