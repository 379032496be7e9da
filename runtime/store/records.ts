// What the Store's calls take and return: messages, leases, lifecycle changes and attempt records
// (the Store contract itself is store.ts; backlog, trend and prune reports are reports.ts).

export type MessageState = "queued" | "leased" | "delivered" | "dead" | "canceled";
export const MESSAGE_STATES: readonly MessageState[] = ["queued", "leased", "delivered", "dead", "canceled"];

export type Headers = Readonly<Record<string, string>>;

export interface NewMessage {
  id: string;
  route: string;
  target: string;
  payload: Uint8Array;
  headers: Headers;
  /** Trace context captured at ingress (e.g. traceparent, remote_addr, path). */
  trace?: Headers | null;
  /** Defaults to now. */
  receivedAtMs?: number;
  /** Defaults to now; a later value keeps the message invisible until then. */
  nextRunAtMs?: number;
}

export interface DequeueRequest {
  route: string;
  /** Only this delivery target of the route; all targets when absent. */
  target?: string;
  /** 1..MAX_DEQUEUE_BATCH. */
  batch: number;
  leaseTtlMs: number;
  /** Long-poll: wait up to this long for a message when none is ready. 0 or absent: answer at once. */
  maxWaitMs?: number;
}

export interface LeasedMessage {
  id: string;
  leaseId: string;
  route: string;
  target: string;
  payload: Uint8Array;
  headers: Headers;
  trace: Headers | null;
  receivedAtMs: number;
  /** 1 on first delivery. */
  attempt: number;
  leaseUntilMs: number;
  /**
   * The payload as base64, when the store read it that way (PostgreSQL encodes it in the lease
   * statement): the Pull API writes it as it is (runtime/pull/encode.ts).
   */
  readonly payloadB64?: string;
  /**
   * The headers (and trace) as the JSON text stored at ingress, when the store kept it: the Pull API
   * writes it as it is rather than parsing it only to serialise it again.
   */
  readonly headersJson?: string;
  readonly traceJson?: string | null;
}

export type LeaseConflictReason = "lease_not_found" | "lease_expired";

export interface LeaseConflict {
  leaseId: string;
  reason: LeaseConflictReason;
}

/** `settled` holds the lease ids that succeeded (including idempotent repeats), in request order. */
export interface LeaseOutcome {
  settled: string[];
  conflicts: LeaseConflict[];
  /**
   * Of `settled`, the leases that had already been settled the same way (an idempotent repeat
   * within the settled-lease memory): present only when there are some, so callers count each
   * settlement once.
   */
  repeated?: string[];
}

/** Restricts lease operations to one route: a lease of another route is `lease_not_found`. */
export interface LeaseScope {
  route?: string;
}

export type NackOptions = { dead?: false; delayMs: number } | { dead: true; reason?: string | null };

export interface MessageView {
  id: string;
  route: string;
  target: string;
  state: MessageState;
  receivedAtMs: number;
  attempt: number;
  nextRunAtMs: number;
  leaseUntilMs: number | null;
  deadReason: string | null;
  /** Present only when asked for (includePayload / includeHeaders / includeTrace). */
  payload?: Uint8Array;
  headers?: Headers;
  trace?: Headers | null;
}

export interface Selector {
  /** One route or several (the lead resolves application+endpoint_name to a route). */
  route?: string | readonly string[];
  target?: string;
}

/** Which large fields a message view carries (GET /messages include_payload/headers/trace). */
export interface MessageIncludes {
  payload?: boolean;
  headers?: boolean;
  trace?: boolean;
}

export interface MessageFilter extends Selector {
  state?: MessageState;
  /** Only messages with received_at < beforeMs. */
  beforeMs?: number;
  limit: number;
  includePayload?: boolean;
  includeHeaders?: boolean;
  includeTrace?: boolean;
}

/**
 * cancel: queued, leased, dead → canceled. requeue: dead, canceled → queued (attempt reset to 0).
 * resume: canceled → queued (attempt kept). dlq_requeue: dead → queued (attempt reset to 0).
 */
export type LifecycleOp = "cancel" | "requeue" | "resume" | "dlq_requeue";

export const LIFECYCLE_FROM_STATES: Readonly<Record<LifecycleOp, readonly MessageState[]>> = {
  cancel: ["queued", "leased", "dead"],
  requeue: ["dead", "canceled"],
  resume: ["canceled"],
  dlq_requeue: ["dead"],
};

export interface LifecycleFilter extends Selector {
  /** Must be one of LIFECYCLE_FROM_STATES[op]; all of them when absent. */
  state?: MessageState;
  beforeMs?: number;
  /** Max items to match and change; oldest received first. */
  limit: number;
  previewOnly?: boolean;
}

export interface FilterOutcome {
  /** Items the filter selects, capped by limit. */
  matched: number;
  /** 0 when previewOnly. */
  changed: number;
}

export type AttemptOutcome = "acked" | "retry" | "dead";

export interface NewAttempt {
  /** Message id (GET /attempts calls it event_id). */
  messageId: string;
  route: string;
  target: string;
  attempt: number;
  statusCode?: number | null;
  error?: string | null;
  outcome: AttemptOutcome;
  deadReason?: string | null;
}

export interface AttemptRecord {
  id: string;
  messageId: string;
  route: string;
  target: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  outcome: AttemptOutcome;
  deadReason: string | null;
  createdAtMs: number;
}

export interface AttemptFilter extends Selector {
  messageId?: string;
  outcome?: AttemptOutcome;
  /** Only attempts with created_at < beforeMs. */
  beforeMs?: number;
  limit: number;
}

/**
 * One version of a runtime secret pool (docs/secrets.md), as stored: the value only sealed
 * (AES-256-GCM, sealed and opened outside the store), its window [notBeforeMs, notAfterMs).
 */
export interface RuntimeSecretRow {
  pool: string;
  id: string;
  sealed: Uint8Array;
  notBeforeMs: number;
  /** Null: no end. */
  notAfterMs: number | null;
  createdAtMs: number;
}

/** The runtime_secrets columns as both SQL stores read them (times may come back as bigint text). */
export interface StoredRuntimeSecret {
  pool_name: string;
  id: string;
  sealed: Uint8Array;
  not_before: number | string;
  not_after: number | string | null;
  created_at: number | string;
}

/** A runtime_secrets row as the Store hands it out. */
export function runtimeSecretOf(row: StoredRuntimeSecret): RuntimeSecretRow {
  return {
    pool: row.pool_name,
    id: row.id,
    sealed: row.sealed,
    notBeforeMs: Number(row.not_before),
    notAfterMs: row.not_after === null ? null : Number(row.not_after),
    createdAtMs: Number(row.created_at),
  };
}

/** A version pruneRuntimeSecrets removed. */
export interface RuntimeSecretKey {
  pool: string;
  id: string;
}
