// The lease hot path of the memory backend: dequeue takes rows off the ready queues, ack / nack /
// extend find the row by lease id; each is O(log n) per message at any backlog.
import { newLeaseId } from "../ids.js";
import { positiveOrNull } from "../options.js";
import type { SettledLeases, SettleKind } from "../settled-leases.js";
import type { DequeueRequest, LeasedMessage, LeaseOutcome, LeaseScope, NackOptions } from "../records.js";
import { uniqueIds } from "../validate.js";
import type { MemoryContext } from "./context.js";
import type { Row } from "./table.js";

export class LeaseOps {
  constructor(
    private readonly cx: MemoryContext,
    private readonly settled: SettledLeases,
  ) {}

  leaseReady(request: DequeueRequest): LeasedMessage[] {
    const { table, clock } = this.cx;
    const nowMs = clock.now();
    table.expireLeases(nowMs);
    const leased: LeasedMessage[] = [];
    const leaseUntilMs = nowMs + request.leaseTtlMs;
    const queues = table.readyQueues(request.route, request.target);
    while (leased.length < request.batch) {
      const row = table.takeReady(queues, nowMs);
      if (!row) break;
      const leaseId = newLeaseId();
      table.lease(row, leaseId, leaseUntilMs);
      leased.push({
        id: row.id,
        leaseId,
        route: row.route,
        target: row.target,
        payload: row.payload,
        headers: row.headers,
        trace: row.trace,
        receivedAtMs: row.receivedAtMs,
        attempt: row.attempt,
        leaseUntilMs,
      });
    }
    if (leased.length > 0) this.cx.ready.notifyAt(leaseUntilMs);
    return leased;
  }

  ack(leaseIds: readonly string[], scope?: LeaseScope): LeaseOutcome {
    const { table, limits } = this.cx;
    return this.settle(leaseIds, scope, "ack", (row, nowMs) => {
      if (positiveOrNull(limits.deliveredRetentionMs) === null) table.delete(row);
      else table.settle(row, "delivered", nowMs);
    });
  }

  nack(leaseIds: readonly string[], how: NackOptions, scope?: LeaseScope): LeaseOutcome {
    const { table, ready } = this.cx;
    const routes = new Set<string>();
    const outcome = this.settle(leaseIds, scope, how.dead ? "dead" : "nack", (row, nowMs) => {
      if (how.dead) {
        row.deadReason = how.reason ? how.reason : null;
        table.settle(row, "dead", nowMs);
        return;
      }
      table.settle(row, "queued", nowMs + Math.max(0, how.delayMs));
      routes.add(row.route);
      if (row.nextRunAtMs > nowMs) ready.notifyAt(row.nextRunAtMs);
    });
    for (const route of routes) ready.notify(route);
    return outcome;
  }

  extend(leaseIds: readonly string[], leaseTtlMs: number, scope?: LeaseScope): LeaseOutcome {
    return this.settle(leaseIds, scope, null, (row, nowMs) => {
      const untilMs = Math.max(row.leaseUntilMs!, nowMs + leaseTtlMs);
      if (untilMs === row.leaseUntilMs) return;
      this.cx.table.extendLease(row, untilMs);
      this.cx.ready.notifyAt(untilMs);
    });
  }

  /**
   * Applies `apply` to every valid lease and reports the others. `kind` null (extend) disables the
   * idempotent-repeat rule, which only covers settling operations.
   */
  private settle(leaseIds: readonly string[], scope: LeaseScope | undefined, kind: SettleKind | null, apply: (row: Row, nowMs: number) => void): LeaseOutcome {
    const ids = uniqueIds(leaseIds, "lease");
    const nowMs = this.cx.clock.now();
    const outcome: LeaseOutcome = { settled: [], conflicts: [] };
    for (const leaseId of ids) {
      const row = this.cx.table.leaseHolder(leaseId);
      const inScope = row !== undefined && (scope?.route === undefined || row.route === scope.route);
      if (row && inScope && row.state === "leased" && row.leaseUntilMs! > nowMs) {
        apply(row, nowMs);
        if (kind) this.settled.remember(leaseId, kind, nowMs, row.route);
        outcome.settled.push(leaseId);
      } else if (kind && this.settled.lookup(leaseId, nowMs, scope?.route) === kind) {
        outcome.settled.push(leaseId);
        (outcome.repeated ??= []).push(leaseId);
      } else if (row && inScope) {
        this.cx.table.expireLeases(nowMs);
        outcome.conflicts.push({ leaseId, reason: "lease_expired" });
      } else {
        outcome.conflicts.push({ leaseId, reason: "lease_not_found" });
      }
    }
    return outcome;
  }
}
