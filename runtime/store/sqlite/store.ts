// The SQLite backend (the embedded default): one connection owned by this process, WAL with
// synchronous=FULL, statements prepared once. This file wires the parts together into the facade
// (facade.ts) and gives every call the same envelope (observed, refused after close, SQLite errors
// mapped to StoreError):
//   connection.ts  the connection, its group commit (the hot paths) and plain write transactions
//   enqueue.ts     admission (max_depth, drop_oldest) and inserts
//   leases.ts      dequeue, ack, nack, extend;  lifecycle.ts  cancel, requeue, resume, DLQ
//   messages.ts    message lists and lookups;  attempts.ts  attempt records
//   analytics.ts   queue stats, backlog reports, trend samples;  retention.ts  prune
//   runtime-secrets.ts  sealed runtime secret versions
import type { Clock } from "../../time/clock.js";
import { buildStore, type StoreOps } from "../facade.js";
import { observed, type StoreObserver } from "../observer.js";
import type { StoreLimits } from "../options.js";
import { ReadySignal } from "../ready-signal.js";
import type { Store } from "../store.js";
import * as analytics from "./analytics.js";
import * as attempts from "./attempts.js";
import { SqliteConnection } from "./connection.js";
import type { SqliteContext } from "./context.js";
import { applyDropPolicyIndex, enqueue } from "./enqueue.js";
import { LeaseOps } from "./leases.js";
import * as lifecycle from "./lifecycle.js";
import * as messages from "./messages.js";
import { sqliteStoreError } from "./open-db.js";
import { prune } from "./retention.js";
import * as runtimeSecrets from "./runtime-secrets.js";

export interface SqliteStoreDeps {
  path: string;
  busyTimeoutMs: number;
  clock: Clock;
  observer: StoreObserver;
  limits: StoreLimits;
  /** Open an existing file for reading only (docs/mcp.md): no migration, no background work, no writes. */
  readOnly?: boolean;
}

export function openSqliteStore(deps: SqliteStoreDeps): Store {
  const conn = new SqliteConnection(deps.path, deps.busyTimeoutMs, deps.clock, deps.observer, deps.readOnly === true);
  const ready = new ReadySignal(deps.clock);
  const cx: SqliteContext = { conn, sql: conn.sql, clock: deps.clock, limits: deps.limits, ready, observer: deps.observer };
  if (!deps.readOnly) applyDropPolicyIndex(cx);
  const leases = new LeaseOps(cx);

  const ops: StoreOps = {
    enqueue: (items) => enqueue(cx, items),
    dequeue: (request) => leases.dequeue(request),
    ack: (leaseIds, scope) => leases.ack(leaseIds, scope),
    nack: (leaseIds, how, scope) => leases.nack(leaseIds, how, scope),
    extend: (leaseIds, leaseTtlMs, scope) => leases.extend(leaseIds, leaseTtlMs, scope),
    recordAttempts: (records) => attempts.recordAttempts(cx, records),
    listAttempts: (filter) => attempts.listAttempts(cx, filter),
    listMessages: (filter) => messages.listMessages(cx, filter),
    getMessages: (ids, include = {}) => messages.getMessages(cx, ids, include),
    changeByIds: (op, ids) => lifecycle.changeByIds(cx, op, ids),
    changeByFilter: (op, filter) => lifecycle.changeByFilter(cx, op, filter),
    deleteDead: (ids) => lifecycle.deleteDead(cx, ids),
    queueStats: () => analytics.queueStats(cx),
    topQueued: (selector, limit) => analytics.topQueued(cx, selector, limit),
    oldestQueued: (selector, limit) => analytics.oldestQueued(cx, selector, limit),
    agingSummary: (selector, states, limit) => analytics.agingSummary(cx, selector, states, limit),
    captureTrendSample: () => analytics.captureTrendSample(cx),
    trends: (request) => analytics.trends(cx, request),
    prune: () => prune(cx),
    listRuntimeSecrets: (pool) => runtimeSecrets.listRuntimeSecrets(cx, pool),
    addRuntimeSecret: (row) => runtimeSecrets.addRuntimeSecret(cx, row),
    deleteRuntimeSecret: (pool, id) => runtimeSecrets.deleteRuntimeSecret(cx, pool, id),
    pruneRuntimeSecrets: (pool) => runtimeSecrets.pruneRuntimeSecrets(cx, pool),
  };

  return buildStore({
    backend: "sqlite",
    ops,
    ready,
    clock: deps.clock,
    // Not an async arrow: a hot path's group-commit promise is returned as it is, one promise and
    // hop fewer per call (it settles with StoreErrors of its own); a synchronous throw, mapped to a
    // StoreError, still becomes observed()'s rejection.
    run: (operation, work) =>
      observed(deps.observer, operation, () => {
        conn.assertOpen();
        try {
          return work();
        } catch (error) {
          throw sqliteStoreError(error, operation);
        }
      }),
    close: async () => {
      ready.close();
      await conn.close();
    },
  });
}
