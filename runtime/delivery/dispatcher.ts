// The lease → deliver → settle loop for push and exec routes (issue 6; docs/delivery.md).
// It talks to the store through the narrow DeliveryQueue below (the lead adapts the real Store to it)
// and gets every setting as plain values: no config text, no IR parsing here.
import { setMaxListeners } from "node:events";
import type { Dispatcher as UndiciDispatcher } from "undici";
import type { Clock } from "../clock.js";
import type { AttemptResult } from "./classify.js";
import { createEgressAgent, type EgressPolicy, type ResolveHost, compileEgressPolicy, type CompiledEgressPolicy } from "./egress.js";
import { deliverExec, EXEC_PIPE_GRACE_MS, type ExecResult } from "./exec.js";
import { deliverHttp } from "./push.js";
import type { AttemptRecord, DeliveryQueue, Leased } from "./queue.js";
import type { RetryPolicy } from "./retry.js";
import { decideSettlement } from "./settle.js";
import { createSigner, type Signer, type SigningConfig } from "./sign.js";

// Re-exported so the dispatcher's users need one import.
export type { AttemptOutcome, AttemptRecord, DeliveryQueue, DequeueRequest, Leased, NackHow } from "./queue.js";

export interface HttpTargetSettings {
  readonly kind: "http";
  /** The target's identity in the store (the URL as configured). */
  readonly target: string;
  readonly url: string;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  /** The target's `header` directives. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly signing?: SigningConfig;
}

export interface ExecTargetSettings {
  readonly kind: "exec";
  /** The target's identity in the store. */
  readonly target: string;
  readonly program: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly outputLimitBytes?: number;
  /** 0 (default): SIGKILL on timeout; >0: SIGTERM first, SIGKILL after this many ms. */
  readonly killGraceMs?: number;
}

export type TargetSettings = HttpTargetSettings | ExecTargetSettings;

export interface RouteDeliveryConfig {
  readonly route: string;
  /** `deliver_concurrency` (default `defaults.deliver.concurrency`, 20): the route's budget. */
  readonly concurrency: number;
  readonly targets: readonly TargetSettings[];
}

export interface DispatcherConfig {
  readonly routes: readonly RouteDeliveryConfig[];
  readonly egress: EgressPolicy;
}

export interface AttemptEvent extends AttemptRecord {
  readonly kind: "http" | "exec";
  readonly durationMs: number;
  /** A retry: when the message is due again (the clock's now at settlement plus the backoff). */
  readonly nextAttemptAtMs?: number;
  /** Exec only: bounded program output, for logging. */
  readonly output?: { readonly stdout: string; readonly stderr: string; readonly truncated: boolean };
}

export interface DeliveryObserver {
  /** Called once per attempt after it is settled: feed spool_delivery_* counters from here. */
  onAttempt?(event: AttemptEvent): void;
  /** Store or internal failures the loop survived (it backs off and goes on). */
  onError?(error: unknown, context: { readonly route: string; readonly target: string; readonly operation: string }): void;
}

export interface DispatcherDeps {
  readonly queue: DeliveryQueue;
  readonly clock: Clock;
  readonly random?: () => number;
  readonly observer?: DeliveryObserver;
  /** Injected into the default egress agent (tests resolve fake names). */
  readonly resolveHost?: ResolveHost;
  /** Replaces the egress agent factory entirely. */
  readonly createAgent?: (policy: EgressPolicy) => UndiciDispatcher;
  /** Wait after a failed dequeue before trying again. Default 1 s. */
  readonly storeRetryMs?: number;
}

export interface StopReport {
  /** Deliveries still running when the drain budget ran out; their leases expire on their own. */
  readonly abandoned: number;
}

export interface DeliveryDispatcher {
  start(): void;
  /** Applies new targets, headers, signing, retry and egress; running deliveries finish on their old settings. */
  reconfigure(config: DispatcherConfig): void;
  stop(options: { drainMs: number }): Promise<StopReport>;
  /** Deliveries running now, per "route target" key and in total. */
  inFlight(): { total: number; byTarget: Record<string, number> };
}

const minLeaseTtlMs = 30_000;
const leaseSlackMs = 5_000;

/**
 * A lease outlives its delivery: max(30 s, the longest one delivery can take + slack). The
 * reference system multiplies by the batch, whose messages it delivers one after another;
 * here every leased message starts its delivery at once (a batch is the free slots), so a message
 * whose delivery was cut off (a crash, a shutdown past its drain) is delivered again after one
 * delivery's worst case, not after the whole batch's (205 s at the defaults, hours at a large
 * deliver_concurrency).
 */
export function leaseTtlFor(deliveryWorstCaseMs: number): number {
  return Math.max(minLeaseTtlMs, deliveryWorstCaseMs + leaseSlackMs);
}

/** How long one delivery to `settings` can run: its timeout, and for a program the kill grace and the wait for its output to close. */
export function deliveryWorstCaseMs(settings: TargetSettings): number {
  return settings.timeoutMs + (settings.kind === "exec" ? (settings.killGraceMs ?? 0) + EXEC_PIPE_GRACE_MS : 0);
}

/**
 * Splits a route's budget between its targets: each gets an equal share and at least one slot.
 * A fixed share (rather than one shared pool) is what keeps a hanging target from holding every
 * slot while a healthy one waits; fan-out gives every target the same messages, so equal is fair.
 * When the budget is below the number of targets each still gets one slot (the route then runs
 * more than its budget rather than starving a target).
 */
export function shareConcurrency(budget: number, targetCount: number): number[] {
  const base = Math.floor(budget / targetCount);
  const extra = budget % targetCount;
  return Array.from({ length: targetCount }, (_, i) => Math.max(1, base + (i < extra ? 1 : 0)));
}

interface ActiveSettings {
  readonly route: string;
  readonly settings: TargetSettings;
  readonly signer?: Signer;
  readonly limit: number;
  readonly leaseTimeoutMs: number;
}

export function createDispatcher(initial: DispatcherConfig, deps: DispatcherDeps): DeliveryDispatcher {
  const random = deps.random ?? Math.random;
  const storeRetryMs = deps.storeRetryMs ?? 1_000;
  const makeAgent = deps.createAgent ?? ((policy: EgressPolicy) => createEgressAgent(policy, { resolveHost: deps.resolveHost }));
  const workers = new Map<string, TargetWorker>();
  const deliveries = new Set<Promise<void>>();
  const hardStop = new AbortController();
  // Every running delivery listens on this one signal; the default limit of 10 would warn at concurrency 11.
  setMaxListeners(0, hardStop.signal);
  let started = false;
  let stopping = false;
  let egress: { policy: EgressPolicy; compiled: CompiledEgressPolicy; agent: UndiciDispatcher };

  class TargetWorker {
    readonly loopStop = new AbortController();
    inFlightCount = 0;
    private wake?: () => void;
    private loopDone?: Promise<void>;

    constructor(
      readonly key: string,
      public active: ActiveSettings,
    ) {}

    start(): void {
      this.loopDone = this.loop();
    }

    /** Stops leasing new messages; deliveries already running finish and settle. */
    stopLeasing(): Promise<void> {
      this.loopStop.abort();
      this.notify();
      return this.loopDone ?? Promise.resolve();
    }

    notify(): void {
      const wake = this.wake;
      this.wake = undefined;
      wake?.();
    }

    private waitForSlot(): Promise<void> {
      return new Promise((resolve) => (this.wake = resolve));
    }

    private async loop(): Promise<void> {
      const signal = this.loopStop.signal;
      while (!signal.aborted) {
        // The settings the lease is sized for are the ones its deliveries use, whatever a reload does during the dequeue.
        const active = this.active;
        const { route, settings, limit } = active;
        const free = limit - this.inFlightCount;
        if (free <= 0) {
          await this.waitForSlot();
          continue;
        }
        let leased: Leased[];
        try {
          leased = await deps.queue.dequeue({ route, target: settings.target, batch: free, leaseTtlMs: leaseTtlFor(active.leaseTimeoutMs) }, signal);
        } catch (error) {
          if (signal.aborted) break;
          deps.observer?.onError?.(error, { route, target: settings.target, operation: "dequeue" });
          await deps.clock.sleep(storeRetryMs, signal).catch(() => {});
          continue;
        }
        // Messages leased as the loop stops are still delivered: they are ours until the lease ends.
        for (const item of leased) this.startDelivery(active, item);
        if (leased.length === 0 && !signal.aborted) {
          try {
            await deps.queue.waitReady(route, settings.target, signal);
          } catch (error) {
            if (signal.aborted) break;
            deps.observer?.onError?.(error, { route, target: settings.target, operation: "wait" });
            await deps.clock.sleep(storeRetryMs, signal).catch(() => {});
          }
        }
      }
    }

    private startDelivery(active: ActiveSettings, item: Leased): void {
      this.inFlightCount++;
      const agent = egress.agent;
      const compiled = egress.compiled;
      const delivery = deliverAndSettle(active, agent, compiled, item)
        .catch((error) => {
          if (!hardStop.signal.aborted) deps.observer?.onError?.(error, { route: active.route, target: active.settings.target, operation: "deliver" });
        })
        .finally(() => {
          this.inFlightCount--;
          deliveries.delete(delivery);
          this.notify();
        });
      deliveries.add(delivery);
    }
  }

  async function deliverAndSettle(active: ActiveSettings, agent: UndiciDispatcher, compiled: CompiledEgressPolicy, item: Leased): Promise<void> {
    const { route, settings } = active;
    const startedMs = deps.clock.now();
    let result: AttemptResult;
    let output: AttemptEvent["output"];
    try {
      if (settings.kind === "http") {
        result = await deliverHttp({
          url: settings.url,
          body: item.body,
          headers: item.headers,
          extraHeaders: settings.headers,
          messageId: item.id,
          attempt: item.attempt,
          timeoutMs: settings.timeoutMs,
          signer: active.signer,
          dispatcher: agent,
          egress: compiled,
          nowMs: startedMs,
          signal: hardStop.signal,
        });
      } else {
        const execResult: ExecResult = await deliverExec({
          program: settings.program,
          args: settings.args,
          body: item.body,
          env: settings.env,
          messageId: item.id,
          route,
          attempt: item.attempt,
          contentType: headerLookup(item.headers, "content-type"),
          headers: item.headers,
          timeoutMs: settings.timeoutMs,
          outputLimitBytes: settings.outputLimitBytes,
          killGraceMs: settings.killGraceMs,
          signal: hardStop.signal,
        });
        result = execResult;
        output = { stdout: execResult.stdout, stderr: execResult.stderr, truncated: execResult.outputTruncated };
      }
    } catch (error) {
      // Shutdown past the drain budget: leave the lease to expire, record nothing.
      if (hardStop.signal.aborted) throw error;
      // A bug in a deliverer must not strand the message until its lease expires.
      deps.observer?.onError?.(error, { route, target: settings.target, operation: "deliver" });
      result = { outcome: "retry", error: error instanceof Error ? error.message : String(error) };
    }

    const record = decideSettlement(result, settings.retry, item, route, settings.target, random);
    const how = record.outcome === "acked" ? undefined : record.outcome === "retry" ? { delayMs: record.delayMs } : { dead: true as const, reason: record.deadReason };
    const attemptRecord: AttemptRecord = record.attemptRecord;
    // The attempt is recorded before the lease is settled, so a message seen delivered or dead
    // always has its attempt listed (separate transactions on PostgreSQL would otherwise race). When
    // the record cannot be written the lease is not settled either: it expires and the message is
    // delivered again, with its attempt recorded then (at-least-once). A failed settlement likewise
    // leaves the lease to expire. Deliveries finishing together still share commits: the store
    // queue groups their records, then their settlements.
    const settledMs = deps.clock.now();
    const nextAttemptAtMs = record.outcome === "retry" ? settledMs + record.delayMs : undefined;
    const reportAttempt = () =>
      deps.observer?.onAttempt?.({
        ...attemptRecord,
        kind: settings.kind,
        durationMs: settledMs - startedMs,
        ...(nextAttemptAtMs !== undefined ? { nextAttemptAtMs } : {}),
        ...(output ? { output } : {}),
      });
    try {
      await deps.queue.recordAttempt(attemptRecord);
    } catch (error) {
      deps.observer?.onError?.(error, { route, target: settings.target, operation: "record_attempt" });
      reportAttempt();
      return;
    }
    try {
      if (how === undefined) await deps.queue.ack([item.leaseId]);
      else await deps.queue.nack([item.leaseId], how);
    } catch (error) {
      deps.observer?.onError?.(error, { route, target: settings.target, operation: how === undefined ? "ack" : "nack" });
    }
    reportAttempt();
  }

  function buildActive(config: DispatcherConfig): Map<string, ActiveSettings> {
    const next = new Map<string, ActiveSettings>();
    for (const route of config.routes) {
      if (route.targets.length === 0) continue;
      const shares = shareConcurrency(Math.max(1, route.concurrency), route.targets.length);
      // One lease TTL per route, from its slowest target (docs/delivery.md).
      const leaseTimeoutMs = Math.max(...route.targets.map(deliveryWorstCaseMs));
      route.targets.forEach((settings, i) => {
        const key = workerKey(route.route, settings.target);
        if (next.has(key)) throw new Error(`route ${route.route} lists target ${settings.target} twice`);
        // Signers are built here so a bad secret fails the reload before anything changes.
        const signer = settings.kind === "http" && settings.signing ? createSigner(settings.signing) : undefined;
        next.set(key, { route: route.route, settings, signer, limit: shares[i], leaseTimeoutMs });
      });
    }
    return next;
  }

  function applyEgress(policy: EgressPolicy): void {
    if (egress && JSON.stringify(egress.policy) === JSON.stringify(policy)) return;
    const compiled = compileEgressPolicy(policy);
    const previous = egress?.agent;
    egress = { policy, compiled, agent: makeAgent(policy) };
    // close() lets requests already on the old agent finish; new deliveries use the new policy.
    previous?.close().catch(() => {});
  }

  function apply(config: DispatcherConfig): void {
    const next = buildActive(config);
    applyEgress(config.egress);
    for (const [key, worker] of workers) {
      const active = next.get(key);
      if (active) {
        worker.active = active;
        worker.notify();
      } else {
        workers.delete(key);
        void worker.stopLeasing();
      }
    }
    for (const [key, active] of next) {
      if (workers.has(key)) continue;
      const worker = new TargetWorker(key, active);
      workers.set(key, worker);
      if (started && !stopping) worker.start();
    }
  }

  apply(initial);

  return {
    start() {
      if (started) return;
      started = true;
      for (const worker of workers.values()) worker.start();
    },
    reconfigure(config) {
      if (stopping) throw new Error("dispatcher is stopping");
      apply(config);
    },
    async stop({ drainMs }) {
      stopping = true;
      await Promise.all([...workers.values()].map((worker) => worker.stopLeasing()));
      const budget = new AbortController();
      const allDone = Promise.allSettled([...deliveries]).then(() => "drained" as const);
      const timedOut = deps.clock.sleep(drainMs, budget.signal).then(
        () => "timeout" as const,
        () => "timeout" as const,
      );
      const how = await Promise.race([allDone, timedOut]);
      budget.abort();
      const abandoned = how === "drained" ? 0 : deliveries.size;
      if (abandoned > 0) {
        hardStop.abort(new DOMException("dispatcher stopped", "AbortError"));
        await Promise.allSettled([...deliveries]);
      }
      await egress.agent.close().catch(() => {});
      return { abandoned };
    },
    inFlight() {
      const byTarget: Record<string, number> = {};
      for (const worker of workers.values()) byTarget[`${worker.active.route} ${worker.active.settings.target}`] = worker.inFlightCount;
      // The total also counts deliveries of targets a reload removed, which are still finishing.
      return { total: deliveries.size, byTarget };
    },
  };
}

function workerKey(route: string, target: string): string {
  return `${route}\u0000${target}`;
}

function headerLookup(headers: Readonly<Record<string, string>>, lowerName: string): string | undefined {
  for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === lowerName) return value;
  return undefined;
}
