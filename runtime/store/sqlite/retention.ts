// Retention on the SQLite store: trend samples captured periodically, and pruning of expired
// queued, delivered and dead messages, attempts and samples in chunks of PRUNE_CHUNK rows, yielding
// to the event loop between chunks so traffic never waits on a large prune.
import { positiveOrNull, type StoreLimits } from "../options.js";
import type { PruneReport } from "../reports.js";
import type { SqliteConnection } from "./connection.js";

/** Rows one prune statement deletes, so a large prune never holds the writer for long. */
const PRUNE_CHUNK = 1000;

export class SqliteRetention {
  constructor(
    private readonly conn: SqliteConnection,
    private readonly limits: StoreLimits,
    private readonly deadCount: () => number,
  ) {}

  captureTrendSample(): number {
    const nowMs = this.conn.clock.now();
    return this.conn.write(() => {
      this.conn.sql.expireLeases.run(nowMs);
      const rows = this.conn.sql.trendCounts.all() as { route: string; target: string; queued: number; leased: number; dead: number }[];
      // An empty queue still records that a capture happened, so trends can tell "empty" from "stale".
      if (rows.length === 0) rows.push({ route: "", target: "", queued: 0, leased: 0, dead: 0 });
      for (const row of rows) this.conn.sql.insertTrendSample.run(nowMs, row.route, row.target, row.queued, row.leased, row.dead);
      return rows.length;
    });
  }

  async prune(): Promise<PruneReport> {
    const nowMs = this.conn.clock.now();
    const report: PruneReport = { queued: 0, delivered: 0, dead: 0, attempts: 0, trendSamples: 0 };
    const queueMaxAge = positiveOrNull(this.limits.queueRetentionMs);
    const deliveredMaxAge = positiveOrNull(this.limits.deliveredRetentionMs);
    const dlqMaxAge = positiveOrNull(this.limits.dlqRetentionMs);
    const dlqMaxDepth = positiveOrNull(this.limits.dlqMaxDepth);
    const attemptsMaxAge = positiveOrNull(this.limits.attemptsRetentionMs);
    const attemptsMaxRows = positiveOrNull(this.limits.attemptsMaxRows);
    const trendMaxAge = positiveOrNull(this.limits.trendRetentionMs);
    const chunked = async (sql: string, ...params: unknown[]) => {
      let total = 0;
      for (;;) {
        this.conn.assertOpen();
        const changes = this.conn.write(() => this.conn.dynamic.get(sql).run(...params).changes);
        total += changes;
        if (changes < PRUNE_CHUNK) return total;
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const messagesWhere = (where: string) => `DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE ${where} LIMIT ${PRUNE_CHUNK})`;
    this.conn.expireLeases();
    if (queueMaxAge !== null) report.queued = await chunked(messagesWhere("state = 'queued' AND received_at < ?"), nowMs - queueMaxAge);
    // With delivered_retention off nothing should be delivered; anything left over goes at once.
    report.delivered = await chunked(messagesWhere("state = 'delivered' AND next_run_at < ?"), deliveredMaxAge === null ? Number.MAX_SAFE_INTEGER : nowMs - deliveredMaxAge);
    if (dlqMaxAge !== null) report.dead = await chunked(messagesWhere("state = 'dead' AND next_run_at < ?"), nowMs - dlqMaxAge);
    if (dlqMaxDepth !== null) {
      let excess = this.deadCount() - dlqMaxDepth;
      while (excess > 0) {
        const take = Math.min(excess, PRUNE_CHUNK);
        const sql = `DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE state = 'dead' ORDER BY next_run_at, received_at, id LIMIT ${take})`;
        const changes = this.conn.write(() => this.conn.dynamic.get(sql).run().changes);
        report.dead += changes;
        excess -= take;
        if (changes < take) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const attemptsChunk = (where: string) => `DELETE FROM attempts WHERE seq IN (SELECT seq FROM attempts WHERE ${where} LIMIT ${PRUNE_CHUNK})`;
    if (attemptsMaxAge !== null) report.attempts += await chunked(attemptsChunk("created_at < ?"), nowMs - attemptsMaxAge);
    if (attemptsMaxRows !== null) {
      const rows = this.conn.dynamic.get("SELECT count(*) FROM attempts").pluck().get() as number;
      if (rows > attemptsMaxRows) {
        const cutoff = this.conn.dynamic.get("SELECT seq FROM attempts ORDER BY seq DESC LIMIT 1 OFFSET ?").pluck().get(attemptsMaxRows - 1) as number;
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
    this.conn.write(() =>
      this.conn.dynamic
        .get("DELETE FROM lease_v1 WHERE NOT EXISTS (SELECT 1 FROM messages WHERE rowid = lease_v1.message_rowid AND lease_id = lease_v1.lease_id)")
        .run(),
    );
    this.conn.checkpoint();
    return report;
  }
}
