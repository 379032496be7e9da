// Delivery attempt records on PostgreSQL: appended in one statement per call, listed newest first.
import { randomBytes } from "node:crypto";
import type { AttemptFilter, AttemptRecord, NewAttempt } from "../records.js";
import type { PgContext, Row } from "./context.js";
import * as q from "./queries.js";

export async function recordAttempts(cx: PgContext, attempts: readonly NewAttempt[]): Promise<void> {
  if (attempts.length === 0) return;
  const nowMs = cx.clock.now();
  const col = <T>(pick: (a: NewAttempt) => T) => attempts.map(pick);
  await cx.deferredSql.unsafe(
    `INSERT INTO attempts (id, message_id, route, target, attempt, status_code, error, outcome, dead_reason, created_at)
     SELECT u.id, u.message_id, u.route, u.target, u.attempt, u.status_code, u.error, u.outcome, u.dead_reason, $10
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int4[], $6::int4[], $7::text[], $8::text[], $9::text[])
       AS u(id, message_id, route, target, attempt, status_code, error, outcome, dead_reason)`,
    [
      col(() => "att_" + randomBytes(8).toString("hex")),
      col((a) => a.messageId),
      col((a) => a.route),
      col((a) => a.target),
      col((a) => a.attempt),
      col((a) => a.statusCode ?? null),
      col((a) => a.error ?? null),
      col((a) => a.outcome),
      col((a) => a.deadReason ?? null),
      nowMs,
    ] as never[],
    { prepare: true },
  );
}

export async function listAttempts(cx: PgContext, filter: AttemptFilter): Promise<AttemptRecord[]> {
  const where = new q.Where().selector(filter);
  if (filter.messageId !== undefined) where.add(`message_id = ${where.param(filter.messageId)}`);
  if (filter.outcome !== undefined) where.add(`outcome = ${where.param(filter.outcome)}`);
  if (filter.beforeMs !== undefined) where.add(`created_at < ${where.param(filter.beforeMs)}`);
  const limit = where.param(filter.limit);
  const rows: Row[] = await cx.sql.unsafe(`SELECT * FROM attempts ${where.sql()} ORDER BY created_at DESC, seq DESC LIMIT ${limit}`, where.params as never[], { prepare: true });
  return rows.map((row) => ({
    id: row.id,
    messageId: row.message_id,
    route: row.route,
    target: row.target,
    attempt: row.attempt,
    statusCode: row.status_code ?? null,
    error: row.error ?? null,
    outcome: row.outcome,
    deadReason: row.dead_reason ?? null,
    createdAtMs: row.created_at,
  }));
}
