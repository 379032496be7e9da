// Retention on the memory backend: applies the limits once over the table, the attempt log and the
// trend samples.
import { positiveOrNull } from "../options.js";
import type { PruneReport } from "../reports.js";
import type { TrendLog } from "./analytics.js";
import type { AttemptLog } from "./attempts.js";
import type { MemoryContext } from "./context.js";
import type { Row } from "./table.js";

export function prune(cx: MemoryContext, attempts: AttemptLog, trends: TrendLog): PruneReport {
  const { table, limits } = cx;
  const nowMs = cx.clock.now();
  table.expireLeases(nowMs);
  const report: PruneReport = { queued: 0, delivered: 0, dead: 0, attempts: 0, trendSamples: 0 };
  const queueMaxAge = positiveOrNull(limits.queueRetentionMs);
  const deliveredMaxAge = positiveOrNull(limits.deliveredRetentionMs);
  const dlqMaxAge = positiveOrNull(limits.dlqRetentionMs);
  const dead: Row[] = [];
  for (const row of [...table.rows.values()]) {
    if (row.state === "queued" && queueMaxAge !== null && row.receivedAtMs < nowMs - queueMaxAge) {
      table.delete(row);
      report.queued++;
    } else if (row.state === "delivered" && (deliveredMaxAge === null || row.nextRunAtMs < nowMs - deliveredMaxAge)) {
      table.delete(row);
      report.delivered++;
    } else if (row.state === "dead") {
      if (dlqMaxAge !== null && row.nextRunAtMs < nowMs - dlqMaxAge) {
        table.delete(row);
        report.dead++;
      } else dead.push(row);
    }
  }
  const dlqMaxDepth = positiveOrNull(limits.dlqMaxDepth);
  if (dlqMaxDepth !== null && dead.length > dlqMaxDepth) {
    // Keeps the newest dead messages (reference: dlq_retention max_depth).
    dead.sort((a, b) => a.nextRunAtMs - b.nextRunAtMs || a.receivedAtMs - b.receivedAtMs || (a.id < b.id ? -1 : 1));
    for (const row of dead.slice(0, dead.length - dlqMaxDepth)) {
      table.delete(row);
      report.dead++;
    }
  }
  const attemptsMaxAge = positiveOrNull(limits.attemptsRetentionMs);
  report.attempts = attempts.prune(attemptsMaxAge === null ? null : nowMs - attemptsMaxAge, positiveOrNull(limits.attemptsMaxRows));
  const trendMaxAge = positiveOrNull(limits.trendRetentionMs);
  if (trendMaxAge !== null) report.trendSamples = trends.prune(nowMs - trendMaxAge);
  return report;
}
