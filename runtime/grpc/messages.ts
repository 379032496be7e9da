// The worker service's messages (proto/spool/worker/v1/worker.proto) to and from the Pull API's
// values: google.protobuf.Duration to milliseconds, leased messages to DequeueItems, a batch's
// lease conflicts to LeaseConflicts.
import { apiError } from "../errors.js";
import type { LeasedMessage } from "../store/records.js";

/** google.protobuf.Duration as proto-loader decodes it (int64 seconds as a number). */
export interface Duration {
  seconds: number;
  nanos: number;
}

/** google.protobuf.Timestamp as it is encoded. */
export interface Timestamp {
  seconds: number;
  nanos: number;
}

/** The largest Duration the well-known type allows (about 10,000 years). */
const MAX_DURATION_SECONDS = 315_576_000_000;

/**
 * A Duration field in milliseconds; undefined when the field was not sent (the Pull API default
 * applies). Negative or malformed durations are 400 invalid_body (INVALID_ARGUMENT); a fraction of
 * a millisecond rounds up, so a positive duration never becomes 0.
 */
export function durationMs(field: string, value: Duration | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  const seconds = Number(value.seconds ?? 0);
  const nanos = Number(value.nanos ?? 0);
  if (!Number.isInteger(seconds) || !Number.isInteger(nanos) || seconds < 0 || nanos < 0 || nanos > 999_999_999 || seconds > MAX_DURATION_SECONDS) {
    throw apiError("invalid_body", `${field} must be a non-negative google.protobuf.Duration (seconds ≥ 0, nanos 0..999999999)`);
  }
  return seconds * 1000 + Math.ceil(nanos / 1_000_000);
}

function timestampOf(ms: number): Timestamp {
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: (ms - seconds * 1000) * 1_000_000 };
}

export interface DequeueItem {
  id: string;
  lease_id: string;
  received_at: Timestamp;
  attempt: number;
  route: string;
  payload: Buffer;
  headers: Readonly<Record<string, string>>;
  trace: Readonly<Record<string, string>>;
  target: string;
  lease_until: Timestamp;
}

/**
 * A leased message as a DequeueItem: the HTTP item's fields (runtime/pull/encode.ts) with the
 * payload as bytes rather than base64. next_run_at stays unset: a leased message is due by
 * definition, and the HTTP item does not carry it either.
 */
export function dequeueItemOf(message: LeasedMessage): DequeueItem {
  return {
    id: message.id,
    lease_id: message.leaseId,
    received_at: timestampOf(message.receivedAtMs),
    attempt: message.attempt,
    route: message.route,
    payload: Buffer.from(message.payload.buffer, message.payload.byteOffset, message.payload.byteLength),
    headers: message.headers,
    trace: message.trace ?? {},
    target: message.target,
    lease_until: timestampOf(message.leaseUntilMs),
  };
}

export interface LeaseConflict {
  lease_id: string;
  expired: boolean;
  reason: string;
}

/** The `conflicts` of a batch's lease_conflict error (runtime/pull/ops.ts) as LeaseConflict messages. */
export function leaseConflictsOf(fields: Readonly<Record<string, unknown>>): LeaseConflict[] {
  const conflicts = (fields.conflicts ?? []) as readonly { lease_id: string; reason: string }[];
  return conflicts.map((c) => ({ lease_id: c.lease_id, expired: c.reason === "lease_expired", reason: c.reason }));
}
