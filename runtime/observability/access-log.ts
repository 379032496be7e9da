// The access log (observability `access_log`): one JSON object per request on the ingress, Pull
// and Admin listeners (docs/operations.md "Logs").
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { redactText } from "./redact.js";
import { openLogSink, type LogOutput, type LogSink } from "./sink.js";
import type { NowClock } from "../time/clock.js";

export type ListenerName = "ingress" | "pull" | "admin" | "metrics";

export interface AccessLogEntry {
  time: string;
  listener: ListenerName | string;
  method: string;
  path: string;
  /** The HTTP status; for a gRPC call, its status name (`OK`, `NOT_FOUND`, …). */
  status: number | string;
  duration_ms: number;
  /** Bytes on the connection for this request; left out for gRPC calls, which share their connection. */
  bytes_in?: number;
  bytes_out?: number;
  remote: string;
}

export interface AccessLogger {
  write(entry: AccessLogEntry): void;
  /**
   * Watches one request and writes its line when the response finishes (or the client goes away).
   * Durations use `nowMs`, a monotonic-enough clock the caller passes (performance.now by default).
   */
  track(req: IncomingMessage, res: ServerResponse, listener: ListenerName | string): void;
  close(): Promise<void>;
}

export interface AccessLoggerOptions {
  output: LogOutput;
  clock: NowClock;
  sink?: LogSink;
  /** Source of elapsed time for duration_ms; defaults to performance.now(). */
  elapsedMs?: () => number;
}

const countedBytes = new WeakMap<Socket, { read: number; written: number }>();

export function createAccessLogger(options: AccessLoggerOptions): AccessLogger {
  const sink = options.sink ?? openLogSink(options.output);
  const elapsedMs = options.elapsedMs ?? (() => performance.now());

  const write = (entry: AccessLogEntry) => sink.write(`${JSON.stringify(entry)}\n`);

  const track = (req: IncomingMessage, res: ServerResponse, listener: string) => {
    const startedMs = elapsedMs();
    const socket = req.socket;
    // Read now: once a client has gone, its socket no longer knows the address.
    const remote = socket.remoteAddress ?? "";
    // Byte counts are socket deltas since the previous request on the same connection ended
    // (requests on one keep-alive connection are sequential). The request's bytes are often read
    // before the handler runs, and counting via 'data' listeners would switch the body stream into
    // flowing mode, so neither "bytes at start" nor listeners work.
    const before = countedBytes.get(socket) ?? { read: 0, written: 0 };
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const now = { read: socket.bytesRead, written: socket.bytesWritten };
      countedBytes.set(socket, now);
      write({
        time: new Date(options.clock.now()).toISOString(),
        listener,
        method: req.method ?? "",
        path: logPath(req.url ?? ""),
        status: res.headersSent ? res.statusCode : 0,
        duration_ms: Math.max(0, Math.round((elapsedMs() - startedMs) * 1000) / 1000),
        bytes_in: Math.max(0, now.read - before.read),
        bytes_out: Math.max(0, now.written - before.written),
        remote,
      });
    };
    res.once("finish", finish);
    res.once("close", finish);
  };

  return { write, track, close: () => sink.close() };
}

// The query string is dropped: query-auth tokens and signed URLs live there.
function logPath(url: string): string {
  const question = url.indexOf("?");
  return redactText(question < 0 ? url : url.slice(0, question));
}
