// The lease → deliver → settle loop for push and exec routes (issue 6; docs/delivery.md).
// It talks to the store through the narrow DeliveryQueue (queue.ts; the lead adapts the real Store
// to it) and gets every setting as plain values (settings.ts): no config text, no IR parsing here.
// One TargetWorker (worker.ts) per route and target leases; attempt.ts delivers and settles.
import { setMaxListeners } from "node:events";
import type { Dispatcher as UndiciDispatcher } from "undici";
import { buildActive } from "./active.js";
import { createEgressAgent, type EgressPolicy, compileEgressPolicy, type CompiledEgressPolicy } from "./egress.js";
import type { DeliveryDispatcher, DispatcherConfig, DispatcherDeps } from "./settings.js";
import { TargetWorker, type WorkerContext } from "./worker.js";

// Re-exported so the dispatcher's users need one import.
export type { AttemptOutcome, AttemptRecord, DeliveryQueue, DequeueRequest, Leased, NackHow } from "./queue.js";
export type * from "./settings.js";
export { deliveryWorstCaseMs, leaseTtlFor, shareConcurrency } from "./active.js";

interface EgressState {
  readonly policy: EgressPolicy;
  readonly compiled: CompiledEgressPolicy;
  readonly agent: UndiciDispatcher;
}

export function createDispatcher(initial: DispatcherConfig, deps: DispatcherDeps): DeliveryDispatcher {
  const makeAgent = deps.createAgent ?? ((policy: EgressPolicy) => createEgressAgent(policy, { resolveHost: deps.resolveHost }));
  const workers = new Map<string, TargetWorker>();
  const hardStop = new AbortController();
  // Every running delivery listens on this one signal; the default limit of 10 would warn at concurrency 11.
  setMaxListeners(0, hardStop.signal);
  let started = false;
  let stopping = false;
  let egress: EgressState | undefined;
  const cx: WorkerContext = {
    deps,
    random: deps.random ?? Math.random,
    storeRetryMs: deps.storeRetryMs ?? 1_000,
    hardStop: hardStop.signal,
    deliveries: new Set<Promise<void>>(),
    egress: () => egress!,
  };

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
      const worker = new TargetWorker(cx, active);
      workers.set(key, worker);
      if (started && !stopping) worker.start();
    }
  }

  async function stop(drainMs: number): Promise<{ abandoned: number }> {
    stopping = true;
    await Promise.all([...workers.values()].map((worker) => worker.stopLeasing()));
    const budget = new AbortController();
    const allDone = Promise.allSettled([...cx.deliveries]).then(() => "drained" as const);
    const timedOut = deps.clock.sleep(drainMs, budget.signal).then(
      () => "timeout" as const,
      () => "timeout" as const,
    );
    const how = await Promise.race([allDone, timedOut]);
    budget.abort();
    const abandoned = how === "drained" ? 0 : cx.deliveries.size;
    if (abandoned > 0) {
      hardStop.abort(new DOMException("dispatcher stopped", "AbortError"));
      await Promise.allSettled([...cx.deliveries]);
    }
    await egress!.agent.close().catch(() => {});
    return { abandoned };
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
    stop: ({ drainMs }) => stop(drainMs),
    inFlight() {
      const byTarget: Record<string, number> = {};
      for (const worker of workers.values()) byTarget[`${worker.active.route} ${worker.active.settings.target}`] = worker.inFlightCount;
      // The total also counts deliveries of targets a reload removed, which are still finishing.
      return { total: cx.deliveries.size, byTarget };
    },
  };
}
