// The PostgreSQL backend: several Spool processes share one schema. This file wires the parts
// together into the facade (facade.ts) and gives every call the same envelope (observed, refused
// after close, driver errors mapped to StoreError):
//   enqueue.ts      group-committed inserts with exact admission across instances
//   leases.ts       dequeue with FOR UPDATE SKIP LOCKED; ack, nack, extend; lease expiry
//   lifecycle.ts    cancel, requeue, resume, DLQ requeue and delete
//   messages.ts     message lists and lookups;  attempts.ts  attempt records
//   analytics.ts    queue stats, backlog reports, trend samples;  retention.ts  prune
//   runtime-secrets.ts  sealed runtime secret versions, shared by the instances
//   wake-listener.ts  LISTEN/NOTIFY wake-ups from other instances (with the long poll's 1 s
//                     re-check as the fallback), re-established whenever the session drops
import type { Clock } from "../../time/clock.js";
import { buildStore, type StoreOps } from "../facade.js";
import { observed, type StoreObserver } from "../observer.js";
import type { StoreLimits } from "../options.js";
import { ReadySignal } from "../ready-signal.js";
import { StoreError, type Store } from "../store.js";
import * as analytics from "./analytics.js";
import * as attempts from "./attempts.js";
import { connectPostgres, measureClockSkewMs, openDeferredPool, postgresStoreError, startupStoreError } from "./connect.js";
import { readyChannel, type PgContext } from "./context.js";
import { EnqueueWriter } from "./enqueue.js";
import { LeaseOps } from "./leases.js";
import * as lifecycle from "./lifecycle.js";
import * as messages from "./messages.js";
import { prune } from "./retention.js";
import * as runtimeSecrets from "./runtime-secrets.js";
import { WakeListener } from "./wake-listener.js";

export interface PostgresStoreDeps {
  dsn: string;
  schema: string;
  poolSize: number;
  clock: Clock;
  observer: StoreObserver;
  limits: StoreLimits;
  /**
   * The trend capture interval of every instance sharing the schema (StoreSchedule). With it, a
   * capture finding another instance's sample younger than half of it records none of its own.
   */
  trendSampleIntervalMs?: number;
  /** Told, once at open, when the server's clock differs from `clock` by more than CLOCK_SKEW_WARN_MS. */
  onClockSkew?: (skewMs: number) => void;
}

/**
 * Hosts kept by NTP agree within milliseconds; past this, leases and wake-ups between instances
 * are off by as much (docs/decisions.md D43), which an operator should hear about at the start.
 */
export const CLOCK_SKEW_WARN_MS = 250;

export async function openPostgresStore(deps: PostgresStoreDeps): Promise<Store> {
  const sql = await connectPostgres({ dsn: deps.dsn, schema: deps.schema, poolSize: deps.poolSize, nowMs: deps.clock.now() });
  if (deps.onClockSkew) {
    // Advice only: a failed measurement does not keep the store from opening.
    const skewMs = await measureClockSkewMs(sql, () => deps.clock.now()).catch(() => 0);
    if (Math.abs(skewMs) > CLOCK_SKEW_WARN_MS) deps.onClockSkew(skewMs);
  }
  const deferredSql = openDeferredPool(deps);
  const ready = new ReadySignal(deps.clock);
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new StoreError("closed", "the store is closed");
  };
  const cx: PgContext = {
    sql,
    deferredSql,
    clock: deps.clock,
    limits: deps.limits,
    ready,
    channel: readyChannel(deps.schema),
    expireLeases: (nowMs) => leases.expireLeases(nowMs),
  };
  const leases = new LeaseOps(cx);
  const enqueues = new EnqueueWriter(cx, deps.schema, assertOpen, deps.observer);
  let wakeups: WakeListener;
  try {
    wakeups = await WakeListener.start({
      dsn: deps.dsn,
      schema: deps.schema,
      channel: cx.channel,
      onRoute: (route) => ready.notify(route),
      onResumed: () => ready.notify(),
    });
  } catch (error) {
    await Promise.all([sql.end({ timeout: 1 }), deferredSql.end({ timeout: 1 })]).catch(() => {});
    throw startupStoreError(error, "cannot LISTEN for wake-ups");
  }

  const ops: StoreOps = {
    enqueue: (items) => (items.length === 0 ? undefined : enqueues.submit(items)),
    dequeue: (request, signal) => leases.leaseReady(request, signal),
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
    captureTrendSample: () => analytics.captureTrendSample(cx, deps.schema, deps.trendSampleIntervalMs),
    trends: (request) => analytics.trends(cx, request),
    prune: () => prune(cx, assertOpen),
    listRuntimeSecrets: (pool) => runtimeSecrets.listRuntimeSecrets(cx, pool),
    addRuntimeSecret: (row) => runtimeSecrets.addRuntimeSecret(cx, row),
    deleteRuntimeSecret: (pool, id) => runtimeSecrets.deleteRuntimeSecret(cx, pool, id),
    pruneRuntimeSecrets: (pool) => runtimeSecrets.pruneRuntimeSecrets(cx, pool),
  };

  return buildStore({
    backend: "postgres",
    ops,
    ready,
    clock: deps.clock,
    run: (operation, work) =>
      observed(deps.observer, operation, async () => {
        assertOpen();
        try {
          return await work();
        } catch (error) {
          throw postgresStoreError(error, operation);
        }
      }),
    close: async () => {
      if (closed) return;
      await new Promise((resolve) => setImmediate(resolve));
      closed = true;
      ready.close();
      await wakeups.close();
      await Promise.all([sql.end({ timeout: 5 }), deferredSql.end({ timeout: 5 })]);
    },
  });
}
