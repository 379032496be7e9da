// Retention on PostgreSQL: applies the limits once, deleting in chunks so no statement holds many
// row locks and other instances keep working meanwhile.
import { positiveOrNull } from "../options.js";
import type { PruneReport } from "../reports.js";
import { SETTLED_LEASE_MEMORY_MS } from "../store.js";
import type { PgContext } from "./context.js";

const PRUNE_CHUNK = 1000;

/** `assertOpen` is checked before every chunk, so close() stops a long prune between statements. */
export async function prune(cx: PgContext, assertOpen: () => void): Promise<PruneReport> {
  const nowMs = cx.clock.now();
  const limits = cx.limits;
  const report: PruneReport = { queued: 0, delivered: 0, dead: 0, attempts: 0, trendSamples: 0 };
  const queueMaxAge = positiveOrNull(limits.queueRetentionMs);
  const deliveredMaxAge = positiveOrNull(limits.deliveredRetentionMs);
  const dlqMaxAge = positiveOrNull(limits.dlqRetentionMs);
  const dlqMaxDepth = positiveOrNull(limits.dlqMaxDepth);
  const attemptsMaxAge = positiveOrNull(limits.attemptsRetentionMs);
  const attemptsMaxRows = positiveOrNull(limits.attemptsMaxRows);
  const trendMaxAge = positiveOrNull(limits.trendRetentionMs);
  const chunked = async (sqlText: string, params: unknown[]) => {
    let total = 0;
    for (;;) {
      assertOpen();
      const result = await cx.sql.unsafe(sqlText, params as never[], { prepare: true });
      total += result.count;
      if (result.count < PRUNE_CHUNK) return total;
    }
  };
  const messagesWhere = (where: string) => `DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE ${where} LIMIT ${PRUNE_CHUNK} FOR UPDATE SKIP LOCKED)`;
  await cx.expireLeases(nowMs);
  if (queueMaxAge !== null) report.queued = await chunked(messagesWhere("state = 'queued' AND received_at < $1"), [nowMs - queueMaxAge]);
  report.delivered = await chunked(messagesWhere("state = 'delivered' AND next_run_at < $1"), [deliveredMaxAge === null ? Number.MAX_SAFE_INTEGER : nowMs - deliveredMaxAge]);
  if (dlqMaxAge !== null) report.dead = await chunked(messagesWhere("state = 'dead' AND next_run_at < $1"), [nowMs - dlqMaxAge]);
  if (dlqMaxDepth !== null) {
    // Keeps the newest dead messages: everything past the newest dlqMaxDepth goes.
    report.dead += await chunked(
      `DELETE FROM messages WHERE id IN (
         SELECT id FROM messages WHERE state = 'dead' ORDER BY next_run_at DESC, received_at DESC, id DESC OFFSET $1 LIMIT ${PRUNE_CHUNK})`,
      [dlqMaxDepth],
    );
  }
  const attemptsChunk = (where: string) => `DELETE FROM attempts WHERE seq IN (SELECT seq FROM attempts WHERE ${where} LIMIT ${PRUNE_CHUNK})`;
  if (attemptsMaxAge !== null) report.attempts += await chunked(attemptsChunk("created_at < $1"), [nowMs - attemptsMaxAge]);
  if (attemptsMaxRows !== null) {
    report.attempts += await chunked(`DELETE FROM attempts WHERE seq IN (SELECT seq FROM attempts ORDER BY seq DESC OFFSET $1 LIMIT ${PRUNE_CHUNK})`, [attemptsMaxRows]);
  }
  if (trendMaxAge !== null) {
    report.trendSamples = await chunked(
      `DELETE FROM trend_samples WHERE ctid IN (SELECT ctid FROM trend_samples WHERE captured_at < $1 LIMIT ${PRUNE_CHUNK})`,
      [nowMs - trendMaxAge],
    );
  }
  await chunked(
    `DELETE FROM settled_leases WHERE lease_id IN (SELECT lease_id FROM settled_leases WHERE settled_at <= $1 LIMIT ${PRUNE_CHUNK})`,
    [nowMs - SETTLED_LEASE_MEMORY_MS],
  );
  return report;
}
