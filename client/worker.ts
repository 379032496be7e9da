// createWorker: a consumer of one pull endpoint (docs/workers.md "The worker library"). It leases
// messages over HTTP long polls or the SSE stream, runs the handler with up to `concurrency` in
// flight, acks what resolved (gathered into batched acks), nacks what threw with a backoff delay,
// renews every lease it holds in one batched extend per period, aborts a handler whose lease could
// not be kept, and on stop() drains: no more leasing, in-flight handlers get until the deadline, the
// rest go back to the queue.
import { defaultRetryDelay, retryAfterOrBackoff, sleep } from "./backoff.js";
import { isAbort } from "./errors.js";
import type { Message } from "./message.js";
import { PullClient, type LeaseConflict } from "./pull-client.js";
import { AckBatcher, settleWithRetry, type SettleReporter } from "./settle.js";
import { LeaseLostError, WorkerStoppedError, type Worker, type WorkerEvent, type WorkerEventType, type WorkerOptions } from "./worker-api.js";

/** A held lease: from receipt until its settle is answered. */
interface Held {
  readonly message: Message;
  /** When the lease runs out as far as this process knows (local clock). */
  deadlineMs: number;
  readonly controller: AbortController;
  state: "waiting" | "running" | "settling";
  /** Lost or abandoned: never acked or nacked by the handler's outcome. */
  given: boolean;
}

const DEFAULTS = { concurrency: 1, leaseTtl: 30_000, maxWait: 20_000, stopTimeout: 10_000, maxLeaseBatch: 100 };
/** An empty answer faster than this (a server with `max_wait` 0) waits IDLE_WAIT_MS before asking again. */
const FAST_EMPTY_MS = 50;
const IDLE_WAIT_MS = 250;
/**
 * stop() lets a dequeue already on its way answer for this long before cutting it: one that has
 * leased messages answers within milliseconds (they are nacked back at once), while a cut answer's
 * leases would wait out their ttl. A long poll with nothing to lease is cut after it.
 */
const STOP_GRACE_MS = 250;

export function createWorker<Payload = unknown>(options: WorkerOptions<Payload>): Worker {
  const concurrency = Math.max(1, Math.floor(options.concurrency ?? DEFAULTS.concurrency));
  const leaseTtl = options.leaseTtl ?? DEFAULTS.leaseTtl;
  const maxLeaseBatch = options.maxLeaseBatch ?? DEFAULTS.maxLeaseBatch;
  const retryDelay = options.retryDelay ?? defaultRetryDelay;
  const client = new PullClient({ url: options.url, token: options.token, endpoint: options.endpoint, timeoutMs: options.timeoutMs, dispatcher: options.dispatcher });

  const listeners = new Map<WorkerEventType, Set<(event: WorkerEvent) => void>>();
  const emit = (event: WorkerEvent) => {
    try {
      options.onEvent?.(event);
      for (const listener of listeners.get(event.type) ?? []) listener(event);
    } catch {
      // A listener's failure never stops the worker.
    }
  };

  const held = new Map<string, Held>();
  const settles = new Set<Promise<void>>();
  let active = 0;
  let slotWaiters: (() => void)[] = [];
  let running = false;
  let stopped = false;
  let fetching = new AbortController();
  let idling = new AbortController();
  let loop: Promise<void> = Promise.resolve();
  let renewTimer: NodeJS.Timeout | undefined;
  let renewing: Promise<void> | null = null;

  const reporter: SettleReporter = {
    transportError: (operation, error, retryInMs) => emit({ type: "transport_error", operation, error, retryInMs }),
    conflicts: (_operation, conflicts) => {
      for (const conflict of conflicts) {
        const h = held.get(conflict.leaseId);
        if (h) emit({ type: "lease_lost", message: h.message, reason: conflict.reason });
      }
    },
  };
  const acks = new AckBatcher((ids) => client.ack(ids), maxLeaseBatch, reporter, (ids) => {
    for (const id of ids) held.delete(id);
  });

  function hold(message: Message, requestedAtMs: number): Held {
    const h: Held = { message, deadlineMs: Math.min(requestedAtMs + leaseTtl, message.leaseUntil.getTime()), controller: new AbortController(), state: "waiting", given: false };
    held.set(message.leaseId, h);
    emit({ type: "received", message });
    return h;
  }

  /** Resolves when a handler may start (fewer than `concurrency` running). */
  function slotFree(): Promise<void> {
    if (active < concurrency) return Promise.resolve();
    return new Promise((resolve) => slotWaiters.push(resolve));
  }

  function freeSlot(): void {
    active--;
    const waiters = slotWaiters;
    slotWaiters = [];
    for (const wake of waiters) wake();
  }

  function run(h: Held): void {
    active++;
    h.state = "running";
    const startedAt = Date.now();
    void Promise.resolve()
      .then(() => options.handler(h.message as Message<Payload>, { signal: h.controller.signal }))
      .then(
        () => finish(h, startedAt, undefined, false),
        (error: unknown) => finish(h, startedAt, error, true),
      );
  }

  function finish(h: Held, startedAt: number, error: unknown, failed: boolean): void {
    freeSlot();
    const durationMs = Date.now() - startedAt;
    if (h.given) {
      held.delete(h.message.leaseId);
      return;
    }
    h.state = "settling";
    if (!failed) {
      acks.add(h.message.leaseId, h.deadlineMs);
      emit({ type: "completed", message: h.message, durationMs });
      return;
    }
    const dead = options.maxAttempts !== undefined && h.message.attempt >= options.maxAttempts;
    const delayMs = dead ? 0 : retryDelayFor(h.message.attempt, error);
    emit({ type: "failed", message: h.message, error, durationMs, delayMs, dead });
    settle(h, dead ? { dead: true, reason: reasonOf(error) } : { delay: delayMs });
  }

  /** The user's retryDelay, made safe: a throw or a value that is no delay falls back to the default. */
  function retryDelayFor(attempt: number, error: unknown): number {
    try {
      const ms = retryDelay(attempt, error);
      if (Number.isFinite(ms) && ms >= 0) return ms;
    } catch {
      // falls through to the default
    }
    return defaultRetryDelay(attempt);
  }

  /** Nacks one held lease (retrying while it may pass) and lets go of it. */
  function settle(h: Held, how: { delay?: number; dead?: boolean; reason?: string }): void {
    h.state = "settling";
    const leaseId = h.message.leaseId;
    track(settleWithRetry("nack", () => client.nack(leaseId, how), h.deadlineMs, reporter).then(() => void held.delete(leaseId)));
  }

  function track(settling: Promise<void>): void {
    settles.add(settling);
    void settling.finally(() => settles.delete(settling));
  }

  /** The lease is gone: the handler's signal aborts, and its outcome settles nothing. */
  function lose(h: Held, reason: string): void {
    if (h.given || h.state === "settling") return;
    h.given = true;
    h.controller.abort(new LeaseLostError(reason));
    emit({ type: "lease_lost", message: h.message, reason });
    if (h.state === "waiting") held.delete(h.message.leaseId);
  }

  /** One batched extend (per `maxLeaseBatch` ids) of every lease held and not being settled. */
  async function renew(): Promise<void> {
    const now = Date.now();
    for (const h of held.values()) if (now >= h.deadlineMs) lose(h, "expired");
    const renewable = [...held.values()].filter((h) => !h.given && h.state !== "settling");
    for (let i = 0; i < renewable.length; i += maxLeaseBatch) {
      const chunk = renewable.slice(i, i + maxLeaseBatch);
      const sentAt = Date.now();
      try {
        const result = await client.extend(
          chunk.map((h) => h.message.leaseId),
          { leaseTtl },
        );
        const refused = new Map<string, LeaseConflict>(result.conflicts.map((c) => [c.leaseId, c]));
        for (const h of chunk) {
          const conflict = refused.get(h.message.leaseId);
          if (conflict) lose(h, conflict.reason);
          else h.deadlineMs = Math.max(h.deadlineMs, sentAt + leaseTtl);
        }
        emit({ type: "extended", count: chunk.length - refused.size });
      } catch (error) {
        // The leases keep their deadlines; the next period tries again (two more before they run out).
        emit({ type: "transport_error", operation: "extend", error, retryInMs: renewPeriod() });
      }
    }
  }

  function renewPeriod(): number {
    return Math.max(10, Math.floor(leaseTtl / 3));
  }

  async function pollLoop(signal: AbortSignal, idle: AbortSignal): Promise<void> {
    for (let failures = 0; running; ) {
      await slotFree();
      // Handlers finishing in the same turn free their slots together: one dequeue for all of them.
      await new Promise((resolve) => setImmediate(resolve));
      if (!running) return;
      const requestedAt = Date.now();
      let messages: Message[];
      try {
        messages = await client.dequeue({ batch: Math.min(concurrency - active, 1000), leaseTtl, maxWait: options.maxWait ?? DEFAULTS.maxWait, signal });
        failures = 0;
      } catch (error) {
        if (!running || isAbort(error)) return;
        await backOff("dequeue", error, ++failures, idle);
        continue;
      }
      for (const message of messages) {
        const h = hold(message, requestedAt);
        if (running) run(h);
        else settle(h, { delay: 0 });
      }
      if (messages.length === 0 && Date.now() - requestedAt < FAST_EMPTY_MS) await sleep(IDLE_WAIT_MS, idle);
    }
  }

  async function streamLoop(signal: AbortSignal): Promise<void> {
    for (let failures = 0; running; ) {
      const openedAt = Date.now();
      let received = 0;
      try {
        for await (const message of client.stream({ batch: Math.min(concurrency, 1000), leaseTtl, signal })) {
          received++;
          failures = 0;
          const h = hold(message, Date.now());
          // Not reading on while every slot is busy holds the server back (it leases no more).
          await slotFree();
          // An event read after its lease ran out (it waited in the connection) is someone else's now.
          if (!h.given && Date.now() >= h.deadlineMs) lose(h, "expired");
          if (running && !h.given) run(h);
          else if (!h.given) settle(h, { delay: 0 });
        }
        // The server ended the stream (sse_max_connection, shutdown): open another.
        if (received === 0 && Date.now() - openedAt < FAST_EMPTY_MS) await sleep(IDLE_WAIT_MS, signal);
      } catch (error) {
        if (!running || isAbort(error)) return;
        await backOff("stream", error, ++failures, signal);
      }
    }
  }

  async function backOff(operation: "dequeue" | "stream", error: unknown, failures: number, signal: AbortSignal): Promise<void> {
    const delay = retryAfterOrBackoff(error, failures);
    emit({ type: "transport_error", operation, error, retryInMs: delay });
    await sleep(delay, signal);
  }

  const worker: Worker = {
    start() {
      if (stopped) throw new Error("a stopped worker does not start again: create another");
      if (running) return;
      running = true;
      fetching = new AbortController();
      idling = new AbortController();
      const signal = fetching.signal;
      loop = (options.transport === "sse" ? streamLoop(signal) : pollLoop(signal, idling.signal)).catch((error) => {
        emit({ type: "transport_error", operation: options.transport === "sse" ? "stream" : "dequeue", error, retryInMs: undefined });
      });
      renewTimer = setInterval(() => {
        renewing ??= renew().finally(() => (renewing = null));
      }, renewPeriod());
      renewTimer.unref();
    },

    async stop(stopOptions = {}) {
      if (!running) return;
      running = false;
      stopped = true;
      idling.abort();
      // A stream is cut at once: what the server already wrote to it waits out its lease.
      const cut = setTimeout(() => fetching.abort(), options.transport === "sse" ? 0 : STOP_GRACE_MS);
      for (const wake of slotWaiters.splice(0)) wake();
      await loop;
      clearTimeout(cut);
      for (const h of held.values()) if (h.state === "waiting" && !h.given) settle(h, { delay: 0 });
      const deadline = Date.now() + (stopOptions.timeout ?? options.stopTimeout ?? DEFAULTS.stopTimeout);
      while (active > 0 && Date.now() < deadline) await sleep(Math.min(20, deadline - Date.now()));
      let abandoned = 0;
      for (const h of held.values()) {
        if (h.state !== "running" || h.given) continue;
        abandoned++;
        h.given = true;
        h.controller.abort(new WorkerStoppedError());
        settle(h, { delay: 0 });
      }
      await acks.drain();
      while (settles.size > 0) await Promise.all([...settles]);
      clearInterval(renewTimer);
      await renewing;
      await client.close();
      emit({ type: "stopped", abandoned });
    },

    on(type, listener) {
      const set = listeners.get(type) ?? new Set();
      listeners.set(type, set);
      set.add(listener as (event: WorkerEvent) => void);
      return () => void set.delete(listener as (event: WorkerEvent) => void);
    },

    get running() {
      return running;
    },
    get inFlight() {
      return active;
    },
  };
  if (options.autostart ?? true) worker.start();
  return worker;
}

function reasonOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.slice(0, 200);
}
