// Retention on the SQLite store: pruning of expired queued, delivered and dead messages, attempts
// and trend samples in chunks of PRUNE_CHUNK rows, yielding to the event loop between chunks so
// traffic never waits on a large prune.
import { positiveOrNull } from "../options.js";
import type { PruneReport } from "../reports.js";
import { countByState } from "./analytics.js";
import type { SqliteContext } from "./context.js";

/** Rows one prune statement deletes, so a large prune never holds the writer for long. */
const PRUNE_CHUNK = 1000;

export async function prune(cx: SqliteContext): Promise<PruneReport> {
  const nowMs = cx.conn.clock.now();
  const report: PruneReport = { queued: 0, delivered: 0, dead: 0, attempts: 0, trendSamples: 0 };
  const queueMaxAge = positiveOrNull(cx.limits.queueRetentionMs);
  const deliveredMaxAge = positiveOrNull(cx.limits.deliveredRetentionMs);
  const dlqMaxAge = positiveOrNull(cx.limits.dlqRetentionMs);
  const dlqMaxDepth = positiveOrNull(cx.limits.dlqMaxDepth);
  const attemptsMaxAge = positiveOrNull(cx.limits.attemptsRetentionMs);
  const attemptsMaxRows = positiveOrNull(cx.limits.attemptsMaxRows);
  const trendMaxAge = positiveOrNull(cx.limits.trendRetentionMs);
  const chunked = async (sql: string, ...params: unknown[]) => {
    let total = 0;
    for (;;) {
      cx.conn.assertOpen();
      const changes = cx.conn.write(() => cx.conn.dynamic.get(sql).run(...params).changes);
      total += changes;
      if (changes < PRUNE_CHUNK) return total;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const messagesWhere = (where: string) => `DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE ${where} LIMIT ${PRUNE_CHUNK})`;
  cx.conn.expireLeases();
  if (queueMaxAge !== null) report.queued = await chunked(messagesWhere("state = 'queued' AND received_at < ?"), nowMs - queueMaxAge);
  // With delivered_retention off nothing should be delivered; anything left over goes at once.
  report.delivered = await chunked(messagesWhere("state = 'delivered' AND next_run_at < ?"), deliveredMaxAge === null ? Number.MAX_SAFE_INTEGER : nowMs - deliveredMaxAge);
  if (dlqMaxAge !== null) report.dead = await chunked(messagesWhere("state = 'dead' AND next_run_at < ?"), nowMs - dlqMaxAge);
  if (dlqMaxDepth !== null) {
    let excess = countByState(cx).dead - dlqMaxDepth;
    while (excess > 0) {
      const take = Math.min(excess, PRUNE_CHUNK);
      const sql = `DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE state = 'dead' ORDER BY next_run_at, received_at, id LIMIT ${take})`;
      const changes = cx.conn.write(() => cx.conn.dynamic.get(sql).run().changes);
      report.dead += changes;
      excess -= take;
      if (changes < take) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  const attemptsChunk = (where: string) => `DELETE FROM attempts WHERE seq IN (SELECT seq FROM attempts WHERE ${where} LIMIT ${PRUNE_CHUNK})`;
  if (attemptsMaxAge !== null) report.attempts += await chunked(attemptsChunk("created_at < ?"), nowMs - attemptsMaxAge);
  if (attemptsMaxRows !== null) {
    const rows = cx.conn.dynamic.get("SELECT count(*) FROM attempts").pluck().get() as number;
    if (rows > attemptsMaxRows) {
      const cutoff = cx.conn.dynamic.get("SELECT seq FROM attempts ORDER BY seq DESC LIMIT 1 OFFSET ?").pluck().get(attemptsMaxRows - 1) as number;
      report.attempts += await chunked(attemptsChunk("seq < ?"), cutoff);
    }
  }
  if (trendMaxAge !== null) {
    report.trendSamples = await chunked(
      `DELETE FROM trend_samples WHERE rowid IN (SELECT rowid FROM trend_samples WHERE captured_at < ? LIMIT ${PRUNE_CHUNK})`,
      nowMs - trendMaxAge,
    );
  }
  // Leases issued before migration 2 are found through lease_v1 (queries.ts); an entry whose row
  // no longer holds that lease can never match again. The table only shrinks, so this is cheap.
  cx.conn.write(() =>
    cx.conn.dynamic
      .get("DELETE FROM lease_v1 WHERE NOT EXISTS (SELECT 1 FROM messages WHERE rowid = lease_v1.message_rowid AND lease_id = lease_v1.lease_id)")
      .run(),
  );
  cx.conn.checkpoint();
  return report;
}
