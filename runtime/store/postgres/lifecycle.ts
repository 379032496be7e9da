// Lifecycle operations on PostgreSQL (cancel, requeue, resume, dlq_requeue, DLQ delete), by ids or
// by filter. A filter's selection is locked before it changes, so a concurrent dequeue or mutation
// on another instance cannot slip in between.
import type { FilterOutcome, LifecycleFilter, LifecycleOp } from "../records.js";
import { lifecycleStates, uniqueIds } from "../validate.js";
import { announceReady, type PgContext, type Row } from "./context.js";
import * as q from "./queries.js";

export async function changeByIds(cx: PgContext, op: LifecycleOp, ids: readonly string[]): Promise<number> {
  const unique = uniqueIds(ids, "message");
  await cx.expireLeases();
  const where = new q.Where();
  where.add(`id = ANY(${where.param(unique)}::text[])`).states(lifecycleStates(op, {}));
  return applyLifecycle(cx, op, where);
}

export async function changeByFilter(cx: PgContext, op: LifecycleOp, filter: LifecycleFilter): Promise<FilterOutcome> {
  const states = lifecycleStates(op, filter);
  await cx.expireLeases();
  const where = new q.Where().states(states).selector(filter);
  if (filter.beforeMs !== undefined) where.add(`received_at < ${where.param(filter.beforeMs)}`);
  const limit = where.param(filter.limit);
  const select = `SELECT id FROM messages ${where.sql()} ORDER BY received_at, id LIMIT ${limit}`;
  if (filter.previewOnly) {
    const rows: Row[] = await cx.sql.unsafe(select, where.params as never[], { prepare: true });
    return { matched: rows.length, changed: 0 };
  }
  // The selection is taken once, in a materialized CTE. As a subquery of the UPDATE (`id IN (…
  // LIMIT n FOR UPDATE)`) PostgreSQL may run it again per row, and each run skips the rows this
  // statement already changed and returns the next ones: the limit was not kept.
  const lockedWhere = new q.Where();
  lockedWhere.params.push(...where.params);
  lockedWhere.add("id IN (SELECT id FROM picked)").states(states);
  const changed = await applyLifecycle(cx, op, lockedWhere, `WITH picked AS MATERIALIZED (${select} FOR UPDATE) `);
  return { matched: changed, changed };
}

export async function deleteDead(cx: PgContext, ids: readonly string[]): Promise<number> {
  const unique = uniqueIds(ids, "message");
  const result = await cx.sql.unsafe("DELETE FROM messages WHERE id = ANY($1::text[]) AND state = 'dead'", [unique], { prepare: true });
  return result.count;
}

async function applyLifecycle(cx: PgContext, op: LifecycleOp, where: q.Where, withClause = ""): Promise<number> {
  const nowMs = cx.clock.now();
  // Requeue gives a fresh retry budget; resume continues where the message stopped (docs/decisions.md D25).
  const set =
    op === "cancel"
      ? "state = 'canceled', lease_id = NULL, lease_until = NULL"
      : `state = 'queued', lease_id = NULL, lease_until = NULL, dead_reason = NULL, next_run_at = ${where.param(nowMs)}${op === "resume" ? "" : ", attempt = 0"}`;
  const rows: Row[] = await cx.sql.unsafe(`${withClause}UPDATE messages SET ${set} ${where.sql()} RETURNING route`, where.params as never[], { prepare: true });
  if (op !== "cancel") await announceReady(cx, rows.map((r) => r.route as string));
  return rows.length;
}
