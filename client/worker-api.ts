// What createWorker takes and gives (docs/workers.md "The worker library"): its options, its
// events, the Worker handle, and the reasons a handler's signal aborts.
import type { Dispatcher } from "undici";
import type { Message } from "./message.js";

export type Handler<Payload = unknown> = (message: Message<Payload>, context: { signal: AbortSignal }) => unknown;

export interface WorkerOptions<Payload = unknown> {
  /** The Pull API base: scheme, host, port and `pull_api.prefix` (`http://127.0.0.1:9443`). */
  url: string;
  token: string;
  /** The route's `pull { path }` (`/github`). */
  endpoint: string;
  handler: Handler<Payload>;
  /** Handlers running at once (default 1). */
  concurrency?: number;
  /** Lease time to live (ms, default 30 s); leases are renewed every third of it. Keep it ≤ `max_lease_ttl`. */
  leaseTtl?: number;
  /** `http`: long-poll dequeues (default); `sse`: one stream per worker. */
  transport?: "http" | "sse";
  /** Long-poll wait of one dequeue (ms, default 20 s; the server cuts it to `max_wait`). */
  maxWait?: number;
  /** The nack delay after a handler threw on delivery `attempt` (default 1 s doubling to 5 min, jittered). */
  retryDelay?: (attempt: number, error: unknown) => number;
  /** A handler that throws on this attempt sends the message to the dead-letter queue (default: never). */
  maxAttempts?: number;
  /** How long stop() waits for running handlers (ms, default 10 s). */
  stopTimeout?: number;
  /** Most lease ids in one ack or extend (default 100, the server's default `max_lease_batch`). */
  maxLeaseBatch?: number;
  /** Start leasing at once (default true); otherwise call start(). */
  autostart?: boolean;
  /** Called with every event (also available one type at a time with on()). */
  onEvent?: (event: WorkerEvent) => void;
  /** How long to wait for an answer (ms, default 30 s). */
  timeoutMs?: number;
  dispatcher?: Dispatcher;
}

export type WorkerEvent =
  | { type: "received"; message: Message }
  | { type: "completed"; message: Message; durationMs: number }
  | { type: "failed"; message: Message; error: unknown; durationMs: number; delayMs: number; dead: boolean }
  /** The lease could not be kept (renewal refused, or its time ran out): the handler's signal was aborted. */
  | { type: "lease_lost"; message: Message; reason: string }
  | { type: "extended"; count: number }
  /** A Pull API call failed; the worker retries after `retryInMs` (undefined: it gave that call up). */
  | { type: "transport_error"; operation: "dequeue" | "stream" | "ack" | "nack" | "extend"; error: unknown; retryInMs: number | undefined }
  /** stop() finished; `abandoned` handlers were still running at the deadline and their messages were nacked. */
  | { type: "stopped"; abandoned: number };

export type WorkerEventType = WorkerEvent["type"];

export interface Worker {
  /** Starts leasing (createWorker does unless `autostart: false`). */
  start(): void;
  /** Stops leasing, waits for running handlers up to `timeout` (ms), nacks the rest, and resolves. */
  stop(options?: { timeout?: number }): Promise<void>;
  on<T extends WorkerEventType>(type: T, listener: (event: Extract<WorkerEvent, { type: T }>) => void): () => void;
  readonly running: boolean;
  /** Handlers running now. */
  readonly inFlight: number;
}

/** Why a handler's signal was aborted. */
export class LeaseLostError extends Error {
  constructor(readonly reason: string) {
    super(`the lease could not be kept (${reason})`);
    this.name = "LeaseLostError";
  }
}

export class WorkerStoppedError extends Error {
  constructor() {
    super("the worker stopped before the handler finished");
    this.name = "WorkerStoppedError";
  }
}
