// Settling leases for the worker: acks gathered into one request while the previous one is on its
// way (at most `maxBatch` ids a request), and any settle retried with backoff while it fails for a
// transient reason and its leases can still be settled.
import { retryAfterOrBackoff, sleep } from "./backoff.js";
import { PullError } from "./errors.js";
import type { LeaseConflict, SettleResult } from "./pull-client.js";

export interface SettleReporter {
  /** A settle call failed and will be retried after `retryInMs` (undefined: given up). */
  transportError(operation: "ack" | "nack", error: unknown, retryInMs: number | undefined): void;
  /** The server refused these leases (expired or unknown): the messages will be redelivered. */
  conflicts(operation: "ack" | "nack", conflicts: readonly LeaseConflict[]): void;
}

/**
 * Runs `call` until it answers, retrying errors that may pass (no answer, 429, 5xx) until
 * `giveUpAtMs` (by then the leases have run out and the server will redeliver anyway).
 */
export async function settleWithRetry(operation: "ack" | "nack", call: () => Promise<SettleResult>, giveUpAtMs: number, reporter: SettleReporter): Promise<void> {
  for (let failures = 1; ; failures++) {
    try {
      const result = await call();
      if (result.conflicts.length > 0) reporter.conflicts(operation, result.conflicts);
      return;
    } catch (error) {
      const delay = retryAfterOrBackoff(error, failures);
      const retry = (!(error instanceof PullError) || error.transient) && Date.now() + delay < giveUpAtMs;
      reporter.transportError(operation, error, retry ? delay : undefined);
      if (!retry) return;
      await sleep(delay);
    }
  }
}

/**
 * Acks gathered while one is in flight, sent together; `settled` hears each batch's lease ids once
 * answered (or given up), and `drain()` resolves when none is left.
 */
export class AckBatcher {
  private readonly pending: { leaseId: string; giveUpAtMs: number }[] = [];
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly ack: (leaseIds: string[]) => Promise<SettleResult>,
    private readonly maxBatch: number,
    private readonly reporter: SettleReporter,
    private readonly settled: (leaseIds: readonly string[]) => void,
  ) {}

  add(leaseId: string, giveUpAtMs: number): void {
    this.pending.push({ leaseId, giveUpAtMs });
    // One macrotask's worth of completions go in the same request.
    if (!this.flushing) this.flushing = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  get size(): number {
    return this.pending.length;
  }

  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.maxBatch);
      let giveUpAtMs = Infinity;
      for (const entry of batch) giveUpAtMs = Math.min(giveUpAtMs, entry.giveUpAtMs);
      const leaseIds = batch.map((entry) => entry.leaseId);
      await settleWithRetry("ack", () => this.ack(leaseIds), giveUpAtMs, this.reporter);
      this.settled(leaseIds);
    }
    this.flushing = null;
  }
}
