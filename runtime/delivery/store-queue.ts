// Adapts the real Store to the dispatcher's narrow DeliveryQueue. The acks of deliveries that finish
// in the same moment are one store call, and so are their attempt records (on SQLite one commit,
// one fsync, each): settling every delivery on its own made the store's commits, not HTTP, the
// limit of push throughput (3 commits per message).
import type { Clock } from "../time/clock.js";
import { GroupCommitter } from "../store/group-commit.js";
import type { LeaseConflict, NewAttempt } from "../store/records.js";
import { MAX_LEASE_BATCH, type Store } from "../store/store.js";
import type { AttemptRecord, DeliveryQueue, Leased, NackHow } from "./queue.js";

export interface StoreQueueOptions {
  /**
   * How long waitReady waits without a ready signal. The store signals enqueues and nacks, but a
   * delayed retry or an expired lease becomes ready by time alone, so the worker must look again.
   */
  readonly fallbackTickMs?: number;
  /** Ack/nack of a lease that had already expired (the message went back to the queue). */
  readonly onLeaseConflict?: (conflicts: readonly LeaseConflict[], operation: "ack" | "nack") => void;
}

export function storeDeliveryQueue(store: Store, clock: Clock, options: StoreQueueOptions = {}): DeliveryQueue {
  const fallbackTickMs = options.fallbackTickMs ?? 1_000;
  const leaseKeys = new Map<string, string>();
  const retries = new RetrySchedule(clock);
  const reportConflicts = (conflicts: readonly LeaseConflict[], operation: "ack" | "nack") => {
    if (conflicts.length > 0) options.onLeaseConflict?.(conflicts, operation);
  };
  // A caller's promise settles once the group holding its write is written (or fails with it).
  const acks = new GroupCommitter<readonly string[]>(async (writes) => {
    const leaseIds = [...new Set(writes.flatMap((write) => write.items))];
    for (const leaseId of leaseIds) leaseKeys.delete(leaseId);
    for (let i = 0; i < leaseIds.length; i += MAX_LEASE_BATCH) {
      reportConflicts((await store.ack(leaseIds.slice(i, i + MAX_LEASE_BATCH))).conflicts, "ack");
    }
    return writes.map(() => undefined);
  });
  const attempts = new GroupCommitter<NewAttempt>(async (writes) => {
    await store.recordAttempts(writes.map((write) => write.items));
    return writes.map(() => undefined);
  });

  return {
    async dequeue(request, signal) {
      // maxWaitMs 0: the dispatcher waits in waitReady, where it can also be woken by a reload or stop.
      const leased = await store.dequeue({ route: request.route, target: request.target, batch: request.batch, leaseTtlMs: request.leaseTtlMs, maxWaitMs: 0 }, signal);
      for (const message of leased) leaseKeys.set(message.leaseId, queueKey(request.route, request.target));
      return leased.map(
        (message): Leased => ({
          leaseId: message.leaseId,
          id: message.id,
          attempt: message.attempt,
          // A view, not a copy: bodies can be megabytes and are only read.
          body: Buffer.from(message.payload.buffer, message.payload.byteOffset, message.payload.byteLength),
          headers: message.headers,
          trace: message.trace,
        }),
      );
    },

    ack(leaseIds) {
      return acks.submit(leaseIds);
    },

    async nack(leaseIds, how: NackHow) {
      const outcome = await store.nack(leaseIds, "dead" in how ? { dead: true, reason: how.reason } : { delayMs: how.delayMs });
      const keys = leaseIds.map((leaseId) => leaseKeys.get(leaseId));
      for (const leaseId of leaseIds) leaseKeys.delete(leaseId);
      if (!("dead" in how)) {
        // Read the clock after the store has set next_run_at, so the wake-up is never early.
        const dueAtMs = clock.now() + how.delayMs;
        const conflicted = new Set(outcome.conflicts.map((c) => c.leaseId));
        leaseIds.forEach((leaseId, i) => {
          const key = keys[i];
          if (key !== undefined && !conflicted.has(leaseId)) retries.add(key, dueAtMs);
        });
      }
      reportConflicts(outcome.conflicts, "nack");
      return outcome;
    },

    recordAttempt(record: AttemptRecord) {
      return attempts.submit({
        messageId: record.eventId,
        route: record.route,
        target: record.target,
        attempt: record.attempt,
        statusCode: record.statusCode ?? null,
        error: record.error ?? null,
        outcome: record.outcome,
        deadReason: record.deadReason ?? null,
      });
    },

    waitReady(route, target, signal) {
      const dueMs = retries.nextDueMs(queueKey(route, target));
      const waitMs = dueMs === undefined ? fallbackTickMs : Math.max(0, Math.min(fallbackTickMs, dueMs - clock.now()));
      return waitForReady(store, clock, route, waitMs, signal);
    },
  };
}

function queueKey(route: string, target: string): string {
  return `${route}\u0000${target}`;
}

/**
 * Retries this process scheduled, per route/target: waitReady wakes when the earliest comes due
 * instead of waiting for the fallback tick, so a 50 ms backoff is not stretched to a second.
 */
class RetrySchedule {
  private readonly dueAtMs = new Map<string, number[]>();

  constructor(private readonly clock: Clock) {}

  add(key: string, atMs: number): void {
    const pending = this.dueAtMs.get(key) ?? [];
    pending.push(atMs);
    this.dueAtMs.set(key, pending);
  }

  /** The earliest pending retry of route/target; retries already due are dropped and reported as `now`. */
  nextDueMs(key: string): number | undefined {
    const all = this.dueAtMs.get(key);
    if (!all) return undefined;
    const nowMs = this.clock.now();
    let earliestMs = Infinity;
    let anyDue = false;
    const pending: number[] = [];
    for (const atMs of all) {
      if (atMs <= nowMs) anyDue = true;
      else {
        pending.push(atMs);
        earliestMs = Math.min(earliestMs, atMs);
      }
    }
    if (pending.length === 0) this.dueAtMs.delete(key);
    else this.dueAtMs.set(key, pending);
    if (anyDue) return nowMs;
    return pending.length > 0 ? earliestMs : undefined;
  }
}

/**
 * Resolves when the store signals `route` ready, after `waitMs`, or when `signal` aborts. The
 * store's ready signal names the route only; a wake-up for another target of the same route costs
 * one empty dequeue, which is cheaper than missing one.
 */
function waitForReady(store: Store, clock: Clock, route: string, waitMs: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const tick = new AbortController();
    let done = false;
    let unsubscribe: (() => void) | undefined;
    const finish = () => {
      if (done) return;
      done = true;
      unsubscribe?.();
      signal.removeEventListener("abort", finish);
      tick.abort();
      resolve();
    };
    unsubscribe = store.onReady((readyRoute) => {
      if (readyRoute === undefined || readyRoute === route) finish();
    });
    if (done) unsubscribe();
    signal.addEventListener("abort", finish, { once: true });
    clock.sleep(waitMs, tick.signal).then(finish, () => {});
  });
}
