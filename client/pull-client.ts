// The Pull API as typed calls (docs/api.md "Pull API", docs/workers.md): dequeue, ack, nack, extend
// and the SSE stream of one pull endpoint. Durations are milliseconds. Lease conflicts (409) are
// answers, not errors: every settle call says which leases it settled and which it could not.
import type { Dispatcher } from "undici";
import { PullError } from "./errors.js";
import { toMessage, type Message, type PullItem } from "./message.js";
import { readEvents } from "./sse.js";
import { Transport } from "./transport.js";

export interface PullClientOptions {
  /** The Pull API base: scheme, host, port and `pull_api.prefix` (`http://127.0.0.1:9443`). */
  url: string;
  /** A bearer token allowed for the endpoint. */
  token: string;
  /** The route's `pull { path }` (`/github`). */
  endpoint: string;
  /** How long to wait for an answer before giving up (ms, default 30 s; a long poll adds its wait). */
  timeoutMs?: number;
  /** An undici dispatcher (TLS settings, a proxy); the client's own keep-alive Agent otherwise. */
  dispatcher?: Dispatcher;
}

export interface DequeueOptions {
  /** How many messages at most (default 1; the server cuts it to `max_batch`). */
  batch?: number;
  /** Lease time to live (ms; default the server's `default_lease_ttl`). */
  leaseTtl?: number;
  /** Long-poll wait (ms; default the server's `default_max_wait`). */
  maxWait?: number;
  signal?: AbortSignal;
}

export interface StreamOptions {
  batch?: number;
  leaseTtl?: number;
  signal?: AbortSignal;
  /** No byte for this long, keepalives included, ends the stream with a network error (ms, default 60 s). */
  idleTimeout?: number;
}

export interface NackOptions {
  /** Back in the queue after this long (ms, default 0). */
  delay?: number;
  /** To the dead-letter queue instead (the delay is ignored). */
  dead?: boolean;
  /** Kept as the dead letter's reason. */
  reason?: string;
}

export interface LeaseConflict {
  leaseId: string;
  reason: "lease_not_found" | "lease_expired" | string;
}

export interface SettleResult {
  /** Leases the call settled (or extended). */
  settled: number;
  /** Leases it could not: unknown, expired, or settled otherwise. */
  conflicts: LeaseConflict[];
}

const DEFAULT_TIMEOUT_MS = 30_000;

export class PullClient {
  readonly endpoint: string;
  private readonly transport: Transport;

  constructor(options: PullClientOptions) {
    if (!options.endpoint.startsWith("/")) throw new TypeError(`endpoint must start with "/", got ${JSON.stringify(options.endpoint)}`);
    this.endpoint = options.endpoint.replace(/\/+$/, "");
    this.transport = new Transport({ url: options.url, token: options.token, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS, dispatcher: options.dispatcher });
  }

  async dequeue(options: DequeueOptions = {}): Promise<Message[]> {
    const body: Record<string, unknown> = {};
    if (options.batch !== undefined) body.batch = options.batch;
    if (options.leaseTtl !== undefined) body.lease_ttl = duration(options.leaseTtl);
    if (options.maxWait !== undefined) body.max_wait = duration(options.maxWait);
    const answer = await this.transport.post(`${this.endpoint}/dequeue`, body, { signal: options.signal, extraWaitMs: options.maxWait ?? 0 });
    const items: PullItem[] = answer.body?.items ?? [];
    return items.map(toMessage);
  }

  ack(leaseIds: string | readonly string[]): Promise<SettleResult> {
    return this.settle("ack", leaseIds, {});
  }

  nack(leaseIds: string | readonly string[], options: NackOptions = {}): Promise<SettleResult> {
    const body: Record<string, unknown> = {};
    if (options.delay !== undefined) body.delay = duration(options.delay);
    if (options.dead !== undefined) body.dead = options.dead;
    if (options.reason !== undefined) body.reason = options.reason;
    return this.settle("nack", leaseIds, body);
  }

  /** Makes each lease run until now + `leaseTtl` (ms; default the server's `default_lease_ttl`). */
  extend(leaseIds: string | readonly string[], options: { leaseTtl?: number } = {}): Promise<SettleResult> {
    return this.settle("extend", leaseIds, options.leaseTtl === undefined ? {} : { lease_ttl: duration(options.leaseTtl) });
  }

  /**
   * The endpoint's SSE stream: each leased message as it is leased, until the server ends the stream
   * (`sse_max_connection`, shutdown) or `signal` aborts. A store failure on the server (an `error`
   * event) or a lost connection rejects with a PullError. Reading slowly holds the server back: it
   * leases no more while the connection is full.
   */
  async *stream(options: StreamOptions = {}): AsyncGenerator<Message> {
    const query = new URLSearchParams();
    if (options.batch !== undefined) query.set("batch", String(options.batch));
    if (options.leaseTtl !== undefined) query.set("lease_ttl", duration(options.leaseTtl));
    const path = `${this.endpoint}/stream${query.size > 0 ? `?${query}` : ""}`;
    const body = await this.transport.stream(path, { signal: options.signal, idleTimeoutMs: options.idleTimeout ?? 60_000 });
    for await (const event of readEvents(body)) {
      if (event.event === "message") yield toMessage(JSON.parse(event.data) as PullItem);
      else if (event.event === "error") throw new PullError(503, "stream_error", event.data);
    }
  }

  /** Closes the client's pooled connections. */
  close(): Promise<void> {
    return this.transport.close();
  }

  private async settle(op: "ack" | "nack" | "extend", leaseIds: string | readonly string[], extra: Record<string, unknown>): Promise<SettleResult> {
    const ids = typeof leaseIds === "string" ? [leaseIds] : [...leaseIds];
    if (ids.length === 0) return { settled: 0, conflicts: [] };
    // A list always, so a conflict answer names the lease either way.
    const answer = await this.transport.post(`${this.endpoint}/${op}`, { lease_ids: ids, ...extra });
    if (answer.status !== 409) return { settled: ids.length, conflicts: [] };
    const conflicts: LeaseConflict[] = (answer.body?.conflicts ?? []).map((c: { lease_id: string; reason: string }) => ({ leaseId: c.lease_id, reason: c.reason }));
    const settled = answer.body?.acked ?? answer.body?.succeeded ?? answer.body?.extended ?? ids.length - conflicts.length;
    return { settled, conflicts };
  }
}

/** Milliseconds in the Pull API's duration grammar. */
function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) throw new TypeError(`a duration must be a non-negative number of milliseconds, got ${ms}`);
  return `${Math.ceil(ms)}ms`;
}
