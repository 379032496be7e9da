// Tracing as the app runs it (docs/operations.md "Tracing"): built once at start from the IR's
// `observability { tracing }` (a change needs a restart), or off. An exporter that cannot be built
// (an unreadable or invalid tls file) is reported and leaves tracing off; the server runs on.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createSecureContext } from "node:tls";
import { readTlsFile } from "../http/tls.js";
import type { Tracer } from "@opentelemetry/api";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOnSampler, BasicTracerProvider, ParentBasedSampler } from "@opentelemetry/sdk-trace-base";
import type { TracingConfig } from "../../compiler/ir.js";
import { BatchingProcessor } from "./batch.js";
import { createExportBatch, type ExportFailure } from "./exporter.js";
import { exportSettings } from "./settings.js";
import { startPushSpan, traceMountHandler, type PushAttempt, type PushSpan, type TracedMount } from "./spans.js";
import { createTransport, type CollectorTls } from "./transport.js";

export type { ExportFailure } from "./exporter.js";
export type { PushAttempt, PushOutcome, PushSpan, TracedMount } from "./spans.js";
export { requestTraceContext, setRequestRoute } from "./spans.js";

type Handler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;

export interface Tracing {
  /** True while spans are exported (spool_tracing_enabled). */
  readonly enabled: boolean;
  /** The mount's handler with a SERVER span per request; the handler itself when tracing is off. */
  traceMount(mount: TracedMount, prefix: string, handler: Handler): Handler;
  /** A push attempt's CLIENT span; undefined when tracing is off (nothing is added to the request). */
  startPush(input: PushAttempt): PushSpan | undefined;
  /** Flushes the spans that wait, for at most `deadlineMs`, and stops. */
  shutdown(deadlineMs: number): Promise<void>;
}

export interface TracingHooks {
  /** service.version. */
  readonly version: string;
  /** The exporter could not be built: +1 spool_tracing_init_failures_total, log tracing_init_failed. */
  onInitFailure(error: unknown): void;
  /** A batch finally failed: +1 spool_tracing_export_errors_total, log tracing_export_failed. */
  onExportFailure(failure: ExportFailure): void;
  /** Spans dropped because the queue was full (or left at shutdown's deadline). */
  onDropped(spans: number): void;
}

export const TRACING_OFF: Tracing = {
  enabled: false,
  traceMount: (_mount, _prefix, handler) => handler,
  startPush: () => undefined,
  shutdown: async () => {},
};

export function startTracing(config: TracingConfig, hooks: TracingHooks): Tracing {
  if (!config.enabled) return TRACING_OFF;
  let tracer: Tracer;
  let processor: BatchingProcessor;
  let closeTransport: () => void;
  try {
    const settings = exportSettings(config);
    const transport = createTransport(settings, collectorTls(config.tls));
    closeTransport = transport.close;
    processor = new BatchingProcessor(createExportBatch(transport, settings.retry, hooks.onExportFailure), hooks.onDropped);
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": "spool", "service.version": hooks.version }),
      // Parent-based: an incoming sampled flag of 0 is honoured; roots are always sampled.
      sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
      spanProcessors: [processor],
    });
    tracer = provider.getTracer("spool", hooks.version);
  } catch (error) {
    hooks.onInitFailure(error);
    return TRACING_OFF;
  }
  return {
    enabled: true,
    traceMount: (mount, prefix, handler) => traceMountHandler(tracer, mount, prefix, handler),
    startPush: (input) => startPushSpan(tracer, input),
    async shutdown(deadlineMs) {
      await processor.shutdownWithin(deadlineMs);
      closeTransport();
    },
  };
}

/** The collector's TLS settings, the files read (and checked by building a TLS context) now: a bad one is an init failure. */
function collectorTls(tls: TracingConfig["tls"]): CollectorTls {
  const read = (name: string, path: string | null) => (path === null ? undefined : readTlsFile("tracing", name, path));
  const out: CollectorTls = {
    ca: read("ca_file", tls.caFile),
    cert: read("cert_file", tls.certFile),
    key: read("key_file", tls.keyFile),
    servername: tls.serverName ?? undefined,
    rejectUnauthorized: !tls.insecureSkipVerify,
  };
  if ((out.cert === undefined) !== (out.key === undefined)) throw new Error("tracing tls needs cert_file and key_file together");
  try {
    createSecureContext({ ca: out.ca, cert: out.cert, key: out.key });
  } catch (error) {
    throw new Error(`tracing tls files are not a usable CA, certificate and key: ${(error as Error).message}`);
  }
  return out;
}
