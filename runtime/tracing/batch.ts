// The span queue between requests and the exporter (docs/operations.md "Tracing"): at most 2048
// finished spans wait (more are dropped and counted), exported in batches of at most 512, at most 5 s
// after a span ends, one export at a time. A request only appends to an array: exporting never
// blocks or fails it. At shutdown what waits is flushed within the deadline it is given.
import type { Context } from "@opentelemetry/api";
import { TraceFlags } from "@opentelemetry/api";
import type { ReadableSpan, Span, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { ExportBatch } from "./exporter.js";

export interface BatchLimits {
  readonly maxQueueSize: number;
  readonly maxBatchSize: number;
  readonly scheduledDelayMs: number;
}

export const BATCH_LIMITS: BatchLimits = { maxQueueSize: 2048, maxBatchSize: 512, scheduledDelayMs: 5_000 };

export class BatchingProcessor implements SpanProcessor {
  private queue: ReadableSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private exporting: Promise<void> | undefined;
  private stopped = false;
  /** Aborted when shutdown's deadline passes: a retry waiting or an export in flight gives up. */
  private readonly cutoff = new AbortController();

  constructor(
    private readonly exportBatch: ExportBatch,
    private readonly onDropped: (spans: number) => void,
    private readonly limits: BatchLimits = BATCH_LIMITS,
  ) {}

  onStart(_span: Span, _context: Context): void {}

  onEnd(span: ReadableSpan): void {
    if (this.stopped || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.queue.length >= this.limits.maxQueueSize) {
      this.onDropped(1);
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= this.limits.maxBatchSize) this.drain();
    else this.timer ??= setTimeout(() => this.drain(), this.limits.scheduledDelayMs).unref();
  }

  /** Exports what waits now, batch by batch; resolves when the queue is empty. */
  async forceFlush(): Promise<void> {
    while (this.queue.length > 0 || this.exporting) await this.drain();
  }

  /** Stops taking spans and flushes them; at `deadlineMs` gives up on what is left (dropped, counted). */
  async shutdownWithin(deadlineMs: number): Promise<void> {
    this.stopped = true;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadlineMs)));
    await Promise.race([this.forceFlush(), deadline]);
    clearTimeout(timer);
    this.cutoff.abort(new Error("tracing shutdown deadline"));
    if (this.queue.length > 0) this.onDropped(this.queue.length);
    this.queue = [];
    await this.exporting;
  }

  shutdown(): Promise<void> {
    return this.shutdownWithin(5_000);
  }

  private drain(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.exporting ??= this.exportAll().finally(() => {
      this.exporting = undefined;
      if (this.queue.length > 0 && !this.stopped) this.timer ??= setTimeout(() => this.drain(), this.limits.scheduledDelayMs).unref();
    });
    return this.exporting;
  }

  /** Full batches go at once; a partial one only on the timer or at a flush (this call came from one of those). */
  private async exportAll(): Promise<void> {
    let first = true;
    while (this.queue.length > 0 && !this.cutoff.signal.aborted && (first || this.stopped || this.queue.length >= this.limits.maxBatchSize)) {
      first = false;
      const batch = this.queue.splice(0, this.limits.maxBatchSize);
      await this.exportBatch(batch, this.cutoff.signal).catch(() => {});
    }
  }
}
