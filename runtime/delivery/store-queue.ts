// Adapts the real Store to the dispatcher's narrow DeliveryQueue.
import type { Clock } from "../clock.js";
import type { LeaseConflict, Store } from "../store/store.js";
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
  const reportConflicts = (conflicts: readonly LeaseConflict[], operation: "ack" | "nack") => {
    if (conflicts.length > 0) options.onLeaseConflict?.(conflicts, operation);
  };

  return {
    async dequeue(request, signal) {
      // maxWaitMs 0: the dispatcher waits in waitReady, where it can also be woken by a reload or stop.
      const leased = await store.dequeue({ route: request.route, target: request.target, batch: request.batch, leaseTtlMs: request.leaseTtlMs, maxWaitMs: 0 }, signal);
      return leased.map(
        (message): Leased => ({
          leaseId: message.leaseId,
          id: message.id,
          attempt: message.attempt,
          // A view, not a copy: bodies can be megabytes and are only read.
          body: Buffer.from(message.payload.buffer, message.payload.byteOffset, message.payload.byteLength),
          headers: message.headers,
        }),
      );
    },

    async ack(leaseIds) {
      const outcome = await store.ack(leaseIds);
      reportConflicts(outcome.conflicts, "ack");
      return outcome;
    },

    async nack(leaseIds, how: NackHow) {
      const outcome = await store.nack(leaseIds, "dead" in how ? { dead: true, reason: how.reason } : { delayMs: how.delayMs });
      reportConflicts(outcome.conflicts, "nack");
      return outcome;
    },

    recordAttempt(record: AttemptRecord) {
      return store.recordAttempts([
        {
          messageId: record.eventId,
          route: record.route,
          target: record.target,
          attempt: record.attempt,
          statusCode: record.statusCode ?? null,
          error: record.error ?? null,
          outcome: record.outcome,
          deadReason: record.deadReason ?? null,
        },
      ]);
    },

    waitReady(route, _target, signal) {
      // The store's ready signal names the route only; a wake-up for another target of the same
      // route costs one empty dequeue, which is cheaper than missing one.
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
        clock.sleep(fallbackTickMs, tick.signal).then(finish, () => {});
      });
    },
  };
}
