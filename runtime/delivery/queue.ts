// The narrow store surface the delivery dispatcher needs. The lead adapts the real Store to it;
// tests use an in-memory fake. Shapes follow the Store contract (docs/architecture.md) and the attempt
// record of docs/api.md "Admin API".
import type { DequeueRequest as StoreDequeueRequest } from "../store/records.js";

export interface Leased {
  readonly leaseId: string;
  /** The message (event) id. */
  readonly id: string;
  /** 1 on the first delivery. */
  readonly attempt: number;
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
  /** The trace context stored at ingress (its traceparent continues the webhook's trace). */
  readonly trace?: Readonly<Record<string, string>> | null;
}

/** The store's dequeue request (runtime/store/records.ts) as the dispatcher makes it: one target, no long poll (it waits with waitReady). */
export type DequeueRequest = Readonly<Required<Pick<StoreDequeueRequest, "route" | "target" | "batch" | "leaseTtlMs">>>;

export type NackHow = { readonly delayMs: number } | { readonly dead: true; readonly reason: string };

export type AttemptOutcome = "acked" | "retry" | "dead";

export interface AttemptRecord {
  readonly eventId: string;
  readonly route: string;
  readonly target: string;
  readonly attempt: number;
  readonly statusCode?: number;
  readonly error?: string;
  readonly outcome: AttemptOutcome;
  readonly deadReason?: string;
}

export interface DeliveryQueue {
  /** Leases up to `batch` ready messages of one route and target; returns at once (empty when none is ready). */
  dequeue(request: DequeueRequest, signal: AbortSignal): Promise<Leased[]>;
  ack(leaseIds: readonly string[]): Promise<unknown>;
  nack(leaseIds: readonly string[], how: NackHow): Promise<unknown>;
  recordAttempt(record: AttemptRecord): Promise<unknown>;
  /** Resolves when a message of route/target may have become ready (enqueue, retry time reached), or on abort. */
  waitReady(route: string, target: string, signal: AbortSignal): Promise<void>;
}
