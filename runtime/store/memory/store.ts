// The memory backend: same semantics as SQLite and PostgreSQL, nothing durable. Every call validates
// first and mutates second, so a refused batch changes nothing. This file wires the parts together
// into the facade (facade.ts) and gives every call the same envelope (observed, refused after close):
//   table.ts       rows and the indexes that keep dequeue/ack O(log n) at a 1M backlog
//   enqueue.ts     admission (ids, max_depth) and inserts;  guard.ts  the retained-footprint guard
//   leases.ts      dequeue, ack, nack, extend;  lifecycle.ts  cancel, requeue, resume, DLQ
//   messages.ts    message lists and lookups;  attempts.ts  attempt records
//   analytics.ts   queue stats, backlog reports, trend samples;  retention.ts  prune
//   runtime-secrets.ts  sealed runtime secret versions (memory only)
import type { Clock } from "../../time/clock.js";
import { buildStore, type StoreOps } from "../facade.js";
import { observed, type StoreObserver } from "../observer.js";
import type { StoreLimits } from "../options.js";
import { ReadySignal } from "../ready-signal.js";
import { SettledLeases } from "../settled-leases.js";
import { StoreError, type Store } from "../store.js";
import * as analytics from "./analytics.js";
import { AttemptLog } from "./attempts.js";
import type { MemoryContext } from "./context.js";
import { enqueue } from "./enqueue.js";
import { MemoryGuard } from "./guard.js";
import { LeaseOps } from "./leases.js";
import * as lifecycle from "./lifecycle.js";
import * as messages from "./messages.js";
import { prune } from "./retention.js";
import { RuntimeSecretTable } from "./runtime-secrets.js";
import { MessageTable } from "./table.js";

export interface MemoryStoreDeps {
  clock: Clock;
  observer: StoreObserver;
  limits: StoreLimits;
}

export function openMemoryStore(deps: MemoryStoreDeps): Store {
  const { clock, observer } = deps;
  const ready = new ReadySignal(clock);
  const table = new MessageTable();
  const cx: MemoryContext = { table, clock, limits: deps.limits, ready };
  const guard = new MemoryGuard(table, deps.limits);
  const leases = new LeaseOps(cx, new SettledLeases());
  const attempts = new AttemptLog();
  const trendLog = new analytics.TrendLog();
  const secrets = new RuntimeSecretTable(clock);
  let closed = false;
  observer.memoryStats?.(() => guard.stats());

  const ops: StoreOps = {
    enqueue: (items) => {
      const dropped = enqueue(cx, guard, items);
      if (dropped > 0) observer.dropped(dropped);
    },
    dequeue: (request) => leases.leaseReady(request),
    ack: (leaseIds, scope) => leases.ack(leaseIds, scope),
    nack: (leaseIds, how, scope) => leases.nack(leaseIds, how, scope),
    extend: (leaseIds, leaseTtlMs, scope) => leases.extend(leaseIds, leaseTtlMs, scope),
    recordAttempts: (records) => attempts.record(records, clock.now()),
    listAttempts: (filter) => attempts.list(filter),
    listMessages: (filter) => messages.listMessages(cx, filter),
    getMessages: (ids, include = {}) => messages.getMessages(cx, ids, include),
    changeByIds: (op, ids) => lifecycle.changeByIds(cx, op, ids),
    changeByFilter: (op, filter) => lifecycle.changeByFilter(cx, op, filter),
    deleteDead: (ids) => lifecycle.deleteDead(cx, ids),
    queueStats: () => analytics.queueStats(cx),
    topQueued: (selector, limit) => analytics.topQueued(cx, selector, limit),
    oldestQueued: (selector, limit) => analytics.oldestQueued(cx, selector, limit),
    agingSummary: (selector, states, limit) => analytics.agingSummary(cx, selector, states, limit),
    captureTrendSample: () => trendLog.capture(cx),
    trends: (request) => trendLog.trends(request),
    prune: () => prune(cx, attempts, trendLog),
    listRuntimeSecrets: (pool) => secrets.list(pool),
    addRuntimeSecret: (row) => secrets.add(row),
    deleteRuntimeSecret: (pool, id) => secrets.delete(pool, id),
    pruneRuntimeSecrets: (pool) => secrets.prune(pool),
  };

  return buildStore({
    backend: "memory",
    ops,
    ready,
    clock,
    // The work itself is synchronous.
    run: (operation, work) =>
      observed(observer, operation, () => {
        if (closed) throw new StoreError("closed", "the store is closed");
        return work();
      }),
    close: async () => {
      closed = true;
      ready.close();
    },
  });
}
