// Leases on the SQLite backend: dequeue, ack, nack and extend, each joining the connection's next
// group commit. Dequeue and extend are durable (no message is ever leased to two consumers at once);
// ack and nack are deferred (see the Store contract). An expired lease met on the way is returned to
// queued at once.
import { positiveOrNull } from "../options.js";
import type { DequeueRequest, LeasedMessage, LeaseOutcome, LeaseScope, NackOptions } from "../records.js";
import { SettledLeases, type SettleKind } from "../settled-leases.js";
import { StoredLease } from "../stored-lease.js";
import { uniqueIds } from "../validate.js";
import type { SqliteContext } from "./context.js";
import type { LeasedRow, LeaseLookupRow, ReadyKey } from "./queries.js";

export class LeaseOps {
  private readonly settled = new SettledLeases();

  constructor(private readonly cx: SqliteContext) {}

  /** Leases the next ready messages of the route; stepwise and durable (a lease survives power loss). */
  dequeue(request: DequeueRequest): Promise<LeasedMessage[]> {
    return this.cx.conn.grouped(() => this.leaseReady(request), "durable", "stepwise");
  }

  /**
   * Stepwise (WriteShape): the lease sweep stands on its own, and after the lease UPDATE only reads
   * of the rows it wrote follow (a read that fails on I/O ends the whole transaction).
   */
  private leaseReady(request: DequeueRequest): LeasedMessage[] {
    const nowMs = this.cx.clock.now();
    const leaseUntilMs = nowMs + request.leaseTtlMs;
    this.cx.sql.expireLeases.run(nowMs);
    const ready = this.nextReady(request, nowMs);
    if (ready.rowids.length === 0) return [];
    const rowids = JSON.stringify(ready.rowids);
    this.cx.sql.leaseByRowid.run(leaseUntilMs, leaseUntilMs, rowids);
    const leased = this.cx.sql.leasedRows.all(rowids) as LeasedRow[];
    if (leased.length === 0) return [];
    const byRowid = new Map(leased.map((row) => [row[0], row]));
    this.cx.ready.notifyAt(leaseUntilMs);
    return ready.rowids.map((rowid, i) => {
      const [, leaseId, payload, headers, trace, attempt, id, receivedAt] = byRowid.get(rowid)!;
      const target = ready.targets.length === 1 ? ready.targets[0] : ready.targets[i];
      return new StoredLease(id, leaseId, request.route, target, payload, headers, trace, receivedAt, attempt, leaseUntilMs);
    });
  }

  /**
   * The rowids of the next `batch` ready rows in dequeue order (next_run_at, received_at, id), and
   * their targets: one per row, or a single one for all of them. Without a target, the route's targets are
   * found by a skip-scan and each contributes its own first `batch`, so the work is O(batch ×
   * targets) at any depth; the merge keeps the order across targets.
   */
  private nextReady(request: DequeueRequest, nowMs: number): { rowids: number[]; targets: string[] } {
    const targets = request.target === undefined ? (this.cx.sql.readyTargets.all({ route: request.route }) as string[]) : [request.target];
    if (targets.length === 0) return { rowids: [], targets };
    if (targets.length === 1) {
      return { rowids: this.cx.sql.readyRowids.all({ route: request.route, target: targets[0], now: nowMs, batch: request.batch }) as number[], targets };
    }
    const keys = targets
      .flatMap((target) =>
        (this.cx.sql.readyKeys.all({ route: request.route, target, now: nowMs, batch: request.batch }) as ReadyKey[]).map(
          (key): [...ReadyKey, string] => [...key, target],
        ),
      )
      .sort(compareReadyKeys)
      .slice(0, request.batch);
    return { rowids: keys.map((key) => key[0]), targets: keys.map((key) => key[4]) };
  }

  ack(leaseIds: readonly string[], scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.cx.conn.grouped(() => {
      if (positiveOrNull(this.cx.limits.deliveredRetentionMs) !== null) {
        return this.settleLeases(leaseIds, scope, "ack", (ids, nowMs) => void this.cx.sql.deliverByIds.run(nowMs, JSON.stringify(ids)));
      }
      const ids = uniqueIds(leaseIds, "lease");
      if (ids.length === 0) return { settled: [], conflicts: [] };
      const nowMs = this.cx.clock.now();
      const route = scope?.route ?? null;
      const deleted = this.cx.sql.ackDelete.all(JSON.stringify(ids), nowMs, route, route) as string[];
      for (const leaseId of deleted) this.settled.remember(leaseId, "ack", nowMs, scope?.route);
      if (deleted.length === ids.length) return { settled: ids, conflicts: [] };
      const done = new Set(deleted);
      const rest = this.settleLeases(ids.filter((id) => !done.has(id)), scope, "ack", () => {});
      const settled = new Set([...deleted, ...rest.settled]);
      return { settled: ids.filter((id) => settled.has(id)), conflicts: rest.conflicts, ...(rest.repeated ? { repeated: rest.repeated } : {}) };
    }, "deferred", "stepwise");
  }

  nack(leaseIds: readonly string[], how: NackOptions, scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.cx.conn.grouped(() => {
      const nowMs = this.cx.clock.now();
      const routes = new Set<string>();
      const outcome = this.settleLeases(leaseIds, scope, how.dead ? "dead" : "nack", (ids, _now, rows) => {
        if (how.dead) return void this.cx.sql.killLeased.run(nowMs, how.reason ? how.reason : null, JSON.stringify(ids));
        this.cx.sql.requeueLeased.run(nowMs + Math.max(0, how.delayMs), JSON.stringify(ids));
        for (const row of rows) routes.add(row.route);
      });
      if (!how.dead && how.delayMs > 0 && routes.size > 0) this.cx.ready.notifyAt(nowMs + how.delayMs);
      for (const route of routes) this.cx.ready.notify(route);
      return outcome;
    }, "deferred", "stepwise");
  }

  extend(leaseIds: readonly string[], leaseTtlMs: number, scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.cx.conn.grouped(() => {
      const nowMs = this.cx.clock.now();
      const outcome = this.settleLeases(leaseIds, scope, null, (ids) => void this.cx.sql.extendLeases.run(nowMs + leaseTtlMs, nowMs + leaseTtlMs, JSON.stringify(ids)));
      if (outcome.settled.length > 0) this.cx.ready.notifyAt(nowMs + leaseTtlMs);
      return outcome;
    }, "durable", "stepwise");
  }

  /**
   * Looks the leases up, applies `apply` to the valid ones in the same transaction and reports the
   * rest. An expired lease found on the way is returned to queued at once. Stepwise (WriteShape):
   * the sweep of expired leases (which never touches a valid one) runs first, and `apply` is one
   * statement, remembered once it has run.
   */
  private settleLeases(
    leaseIds: readonly string[],
    scope: LeaseScope | undefined,
    kind: SettleKind | null,
    apply: (rowids: number[], nowMs: number, rows: LeaseLookupRow[]) => void,
  ): LeaseOutcome {
    const ids = uniqueIds(leaseIds, "lease");
    const nowMs = this.cx.clock.now();
    const outcome: LeaseOutcome = { settled: [], conflicts: [] };
    if (ids.length === 0) return outcome;
    const found = new Map((this.cx.sql.lookupLeases.all(JSON.stringify(ids)) as LeaseLookupRow[]).map((row) => [row.lease_id, row]));
    const valid: LeaseLookupRow[] = [];
    let sawExpired = false;
    for (const leaseId of ids) {
      const row = found.get(leaseId);
      // A queued row still holding this lease id is one whose lease ran out and was swept.
      const inScope = row !== undefined && (row.state === "leased" || row.state === "queued") && (scope?.route === undefined || row.route === scope.route);
      if (row && inScope && row.state === "leased" && row.lease_until > nowMs) {
        valid.push(row);
        outcome.settled.push(leaseId);
      } else if (kind && this.settled.lookup(leaseId, nowMs, scope?.route) === kind) {
        outcome.settled.push(leaseId);
        (outcome.repeated ??= []).push(leaseId);
      } else if (row && inScope) {
        sawExpired = true;
        outcome.conflicts.push({ leaseId, reason: "lease_expired" });
      } else {
        outcome.conflicts.push({ leaseId, reason: "lease_not_found" });
      }
    }
    if (sawExpired) this.cx.sql.expireLeases.run(nowMs);
    if (valid.length > 0) apply(valid.map((row) => row.rowid), nowMs, valid);
    if (kind) for (const row of valid) this.settled.remember(row.lease_id, kind, nowMs, row.route);
    return outcome;
  }
}

/** Dequeue order; ids compare as SQLite compares TEXT (UTF-8 bytes), which JS string order is not. */
function compareReadyKeys(a: readonly [...ReadyKey, string], b: readonly [...ReadyKey, string]): number {
  return a[2] - b[2] || a[3] - b[3] || Buffer.compare(Buffer.from(a[1]), Buffer.from(b[1]));
}
