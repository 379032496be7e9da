// Attempt records on the SQLite backend: written in the connection's group commit (deferred: see the
// Store contract), listed newest first.
import { randomBytes } from "node:crypto";
import type { AttemptFilter, AttemptRecord, NewAttempt } from "../records.js";
import type { SqliteContext } from "./context.js";
import { selectorWhere } from "./queries.js";

export function recordAttempts(cx: SqliteContext, attempts: readonly NewAttempt[]): Promise<void> {
  return cx.conn.grouped(() => {
    const nowMs = cx.clock.now();
    for (const a of attempts) {
      cx.sql.insertAttempt.run(
        "att_" + randomBytes(8).toString("hex"),
        a.messageId,
        a.route,
        a.target,
        a.attempt,
        a.statusCode ?? null,
        a.error ?? null,
        a.outcome,
        a.deadReason ?? null,
        nowMs,
      );
    }
  }, "deferred", attempts.length <= 1 ? "stepwise" : "atomic");
}

export function listAttempts(cx: SqliteContext, filter: AttemptFilter): AttemptRecord[] {
  const conditions: string[] = [];
  const params: unknown[] = [];
  selectorWhere(filter, conditions, params);
  if (filter.messageId !== undefined) conditions.push("message_id = ?"), params.push(filter.messageId);
  if (filter.outcome !== undefined) conditions.push("outcome = ?"), params.push(filter.outcome);
  if (filter.beforeMs !== undefined) conditions.push("created_at < ?"), params.push(filter.beforeMs);
  const where = conditions.length ? `WHERE ${conditions.join(" AND ")}` : "";
  const rows = cx.conn.dynamic
    .get(`SELECT * FROM attempts ${where} ORDER BY created_at DESC, seq DESC LIMIT ?`)
    .all(...params, filter.limit) as Record<string, unknown>[];
  return rows.map((row) => ({
    id: row.id as string,
    messageId: row.message_id as string,
    route: row.route as string,
    target: row.target as string,
    attempt: row.attempt as number,
    statusCode: (row.status_code as number | null) ?? null,
    error: (row.error as string | null) ?? null,
    outcome: row.outcome as AttemptRecord["outcome"],
    deadReason: (row.dead_reason as string | null) ?? null,
    createdAtMs: row.created_at as number,
  }));
}
