// Delivery attempt records of the memory backend, in creation order; listed newest first.
import { matchesSelector } from "../backlog.js";
import type { AttemptFilter, AttemptRecord, NewAttempt } from "../records.js";

export class AttemptLog {
  private records: AttemptRecord[] = [];
  private seq = 0;

  record(attempts: readonly NewAttempt[], nowMs: number): void {
    for (const a of attempts) {
      this.seq++;
      this.records.push({
        id: "att_" + this.seq.toString(16).padStart(16, "0"),
        messageId: a.messageId,
        route: a.route,
        target: a.target,
        attempt: a.attempt,
        statusCode: a.statusCode ?? null,
        error: a.error ?? null,
        outcome: a.outcome,
        deadReason: a.deadReason ?? null,
        createdAtMs: nowMs,
      });
    }
  }

  list(filter: AttemptFilter): AttemptRecord[] {
    const found: AttemptRecord[] = [];
    for (let i = this.records.length - 1; i >= 0 && found.length < filter.limit; i--) {
      const a = this.records[i];
      if (!matchesSelector(filter, a.route, a.target)) continue;
      if (filter.messageId !== undefined && a.messageId !== filter.messageId) continue;
      if (filter.outcome !== undefined && a.outcome !== filter.outcome) continue;
      if (filter.beforeMs !== undefined && !(a.createdAtMs < filter.beforeMs)) continue;
      found.push({ ...a });
    }
    return found;
  }

  /** Drops records created before `minCreatedAtMs`, then all but the newest `maxRows`; returns how many went. */
  prune(minCreatedAtMs: number | null, maxRows: number | null): number {
    const before = this.records.length;
    if (minCreatedAtMs !== null) this.records = this.records.filter((a) => a.createdAtMs >= minCreatedAtMs);
    if (maxRows !== null && this.records.length > maxRows) this.records = this.records.slice(this.records.length - maxRows);
    return before - this.records.length;
  }
}
