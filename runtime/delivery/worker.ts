// One (route, target)'s lease loop: lease as many messages as it has free slots, start each
// delivery at once, wait for a slot or for a message to become ready (docs/delivery.md).
import type { ActiveSettings } from "./active.js";
import { deliverAndSettle, type DeliveryContext, type EgressInUse } from "./attempt.js";
import type { Leased } from "./queue.js";
import { writtenTarget } from "./settings.js";

/** The dispatcher's state a worker shares: its deliveries (drained on stop) and the egress in use now. */
export interface WorkerContext extends DeliveryContext {
  readonly deliveries: Set<Promise<void>>;
  readonly storeRetryMs: number;
  egress(): EgressInUse;
}

export class TargetWorker {
  readonly loopStop = new AbortController();
  inFlightCount = 0;
  private wake?: () => void;
  private loopDone?: Promise<void>;

  constructor(
    private readonly cx: WorkerContext,
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
      const free = active.limit - this.inFlightCount;
      if (free <= 0) {
        await this.waitForSlot();
        continue;
      }
      const leased = await this.lease(active, free, signal);
      if (leased === "stopped") break;
      if (leased === "failed") continue;
      // Messages leased as the loop stops are still delivered: they are ours until the lease ends.
      for (const item of leased) this.startDelivery(active, item);
      if (leased.length === 0 && !signal.aborted && (await this.waitReady(active, signal)) === "stopped") break;
    }
  }

  /** Leases up to `free` messages; after a store failure it reports, backs off and says so. */
  private async lease(active: ActiveSettings, free: number, signal: AbortSignal): Promise<Leased[] | "failed" | "stopped"> {
    const { route, settings } = active;
    try {
      return await this.cx.deps.queue.dequeue({ route, target: settings.target, batch: free, leaseTtlMs: active.leaseTtlMs }, signal);
    } catch (error) {
      if (signal.aborted) return "stopped";
      this.cx.deps.observer?.onError?.(error, { route, target: settings.target, writtenTarget: writtenTarget(settings), operation: "dequeue" });
      await this.cx.deps.clock.sleep(this.cx.storeRetryMs, signal).catch(() => {});
      return "failed";
    }
  }

  /** Waits until a message may be ready; a store failure is reported and backed off from. */
  private async waitReady(active: ActiveSettings, signal: AbortSignal): Promise<"stopped" | undefined> {
    const { route, settings } = active;
    try {
      await this.cx.deps.queue.waitReady(route, settings.target, signal);
    } catch (error) {
      if (signal.aborted) return "stopped";
      this.cx.deps.observer?.onError?.(error, { route, target: settings.target, writtenTarget: writtenTarget(settings), operation: "wait" });
      await this.cx.deps.clock.sleep(this.cx.storeRetryMs, signal).catch(() => {});
    }
    return undefined;
  }

  private startDelivery(active: ActiveSettings, item: Leased): void {
    this.inFlightCount++;
    const { cx } = this;
    const delivery = deliverAndSettle(cx, active, cx.egress(), item)
      .catch((error) => {
        if (!cx.hardStop.aborted) cx.deps.observer?.onError?.(error, { route: active.route, target: active.settings.target, writtenTarget: writtenTarget(active.settings), operation: "deliver" });
      })
      .finally(() => {
        this.inFlightCount--;
        cx.deliveries.delete(delivery);
        this.notify();
      });
    cx.deliveries.add(delivery);
  }
}
