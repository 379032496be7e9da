// The in-process wake-up signal behind long-poll dequeue: enqueue, nack, requeue and resume call
// notify() at once; nack delays, future next_run_at values and lease expiries are armed with
// notifyAt() on the injected clock, so a waiting dequeue returns within milliseconds of a message
// becoming ready (docs/decisions.md D24: within 100 ms on the same instance) and tests need no sleeping.
import type { Clock } from "../time/clock.js";
import type { ReadyListener } from "./store.js";

/** Due times are rounded up to this grid so a stream of leases arms a bounded number of timers. */
const DUE_GRID_MS = 25;
/** A long poll re-checks the store at least this often: the fallback for wake-ups from other instances. */
export const FALLBACK_POLL_MS = 1_000;

export class ReadySignal {
  private readonly listeners = new Set<ReadyListener>();
  private readonly waiters = new Set<{ route: string; wake: () => void }>();
  private readonly dueTimesMs: number[] = [];
  private armed: { atMs: number; cancel: AbortController } | null = null;
  private closed = false;
  /** Bumped on every notify; a dequeue that read it before looking can tell whether it missed one. */
  generation = 0;

  constructor(private readonly clock: Clock) {}

  subscribe(listener: ReadyListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(route?: string): void {
    this.generation++;
    // Copied before calling (a wake or a listener may change the sets), but not when empty: this runs
    // for every ingress request, and a copy of an empty set is still an allocation.
    if (this.waiters.size > 0) {
      for (const waiter of [...this.waiters]) {
        if (route === undefined || waiter.route === route) waiter.wake();
      }
    }
    if (this.listeners.size === 0) return;
    for (const listener of [...this.listeners]) {
      try {
        listener(route);
      } catch {
        // A listener's failure must not break the store operation that signalled.
      }
    }
  }

  /**
   * After new messages were stored: wakes each of their routes once now, and arms a wake-up for any
   * message scheduled to become ready later (a future next_run_at).
   */
  notifyStored(messages: readonly { readonly route: string; readonly nextRunAtMs?: number }[], nowMs: number): void {
    // One message (an ingress request without fan-out): no set of routes to build.
    if (messages.length === 1) {
      const [message] = messages;
      if (message.nextRunAtMs !== undefined && message.nextRunAtMs > nowMs) this.notifyAt(message.nextRunAtMs);
      return this.notify(message.route);
    }
    const routes = new Set<string>();
    for (const message of messages) {
      routes.add(message.route);
      if (message.nextRunAtMs !== undefined && message.nextRunAtMs > nowMs) this.notifyAt(message.nextRunAtMs);
    }
    for (const route of routes) this.notify(route);
  }

  /** Arms a notify for the moment a message becomes ready (nack delay, lease expiry, future next_run_at). */
  notifyAt(atMs: number): void {
    if (this.closed) return;
    const dueMs = Math.ceil(atMs / DUE_GRID_MS) * DUE_GRID_MS;
    if (dueMs <= this.clock.now()) return this.notify();
    const index = sortedIndex(this.dueTimesMs, dueMs);
    if (this.dueTimesMs[index] === dueMs) return;
    this.dueTimesMs.splice(index, 0, dueMs);
    this.arm();
  }

  /**
   * Waits until a notify for `route` (or any route), `timeoutMs` of clock time, or abort. Resolves at
   * once when a notify happened since `sinceGeneration` was read.
   */
  wait(route: string, sinceGeneration: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.generation !== sinceGeneration || this.closed || signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const stopTimer = new AbortController();
      const waiter = { route, wake: () => finish() };
      const finish = () => {
        this.waiters.delete(waiter);
        signal?.removeEventListener("abort", finish);
        stopTimer.abort();
        resolve();
      };
      this.waiters.add(waiter);
      signal?.addEventListener("abort", finish, { once: true });
      this.clock.sleep(timeoutMs, stopTimer.signal).then(finish, () => {});
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    this.closed = true;
    this.armed?.cancel.abort();
    this.armed = null;
    for (const waiter of [...this.waiters]) waiter.wake();
  }

  private arm(): void {
    const nextMs = this.dueTimesMs[0];
    if (nextMs === undefined || this.closed) return;
    if (this.armed && this.armed.atMs <= nextMs) return;
    this.armed?.cancel.abort();
    const cancel = new AbortController();
    this.armed = { atMs: nextMs, cancel };
    this.clock.sleep(nextMs - this.clock.now(), cancel.signal).then(
      () => {
        if (this.armed?.cancel !== cancel) return;
        this.armed = null;
        const nowMs = this.clock.now();
        let fired = 0;
        while (this.dueTimesMs.length > 0 && this.dueTimesMs[0] <= nowMs) {
          this.dueTimesMs.shift();
          fired++;
        }
        if (fired > 0) this.notify();
        this.arm();
      },
      () => {},
    );
  }
}

function sortedIndex(values: readonly number[], value: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (values[mid] < value) low = mid + 1;
    else high = mid;
  }
  return low;
}

export interface LongPollOptions {
  route: string;
  maxWaitMs: number;
  signal?: AbortSignal;
  clock: Clock;
  ready: ReadySignal;
}

/**
 * Tries `attempt` until it returns messages, the wait runs out or the signal aborts. Reads the signal's
 * generation before each attempt so a notify that lands between "found nothing" and "start waiting"
 * is not missed.
 */
export async function longPoll<T>(options: LongPollOptions, attempt: () => Promise<T[]>): Promise<T[]> {
  const { clock, ready, signal } = options;
  const deadlineMs = clock.now() + Math.max(0, options.maxWaitMs);
  for (;;) {
    if (signal?.aborted || ready.isClosed) return [];
    const generation = ready.generation;
    const found = await attempt();
    if (found.length > 0) return found;
    const remainingMs = deadlineMs - clock.now();
    if (remainingMs <= 0 || signal?.aborted) return [];
    await ready.wait(options.route, generation, Math.min(remainingMs, FALLBACK_POLL_MS), signal);
  }
}
