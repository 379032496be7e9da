// One batch of spans to the collector: encoded as OTLP JSON, posted, and with `retry { enabled on }`
// posted again after a retryable failure (network error, timeout, 429, 502, 503, 504) with exponential
// backoff from initial_interval to max_interval, within max_elapsed_time. A batch that finally fails is
// reported once (spool_tracing_export_errors_total, tracing_export_failed) and dropped.
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { encodeSpans } from "./otlp-json.js";
import { backoffMs, type RetryPolicy } from "./settings.js";
import type { SendResult, Transport } from "./transport.js";

export interface ExportFailure {
  readonly reason: string;
  readonly spans: number;
  readonly attempts: number;
}

export type ExportBatch = (spans: readonly ReadableSpan[], signal: AbortSignal) => Promise<void>;

export function createExportBatch(transport: Transport, retry: RetryPolicy | null, onFailure: (failure: ExportFailure) => void): ExportBatch {
  return async (spans, signal) => {
    let body: Buffer;
    try {
      body = encodeSpans(spans);
    } catch (error) {
      onFailure({ reason: `the spans could not be encoded: ${error instanceof Error ? error.message : String(error)}`, spans: spans.length, attempts: 0 });
      return;
    }
    const startedMs = Date.now();
    let attempts = 1;
    let result: SendResult = await transport.send(body, signal);
    while (result.kind === "retryable" && retry && !signal.aborted) {
      const waitMs = Math.min(retry.maxIntervalMs, result.retryAfterMs ?? backoffMs(retry, attempts));
      if (Date.now() + waitMs - startedMs > retry.maxElapsedTimeMs) break;
      if (!(await sleep(waitMs, signal))) break;
      attempts++;
      result = await transport.send(body, signal);
    }
    if (result.kind !== "ok") onFailure({ reason: result.reason, spans: spans.length, attempts });
  };
}

/** Resolves true after `ms`, false at once when the signal aborts (shutdown's deadline). */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
