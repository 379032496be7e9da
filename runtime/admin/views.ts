// JSON projections of store records for Admin responses (docs/api.md "Admin API"):
// snake_case fields, RFC 3339 times, payloads in base64.
import type { AttemptRecord, MessageView } from "../store/records.js";
import { formatRfc3339 } from "./params.js";

export function messageItem(view: MessageView): Record<string, unknown> {
  const item: Record<string, unknown> = {
    id: view.id,
    route: view.route,
    target: view.target,
    state: view.state,
    received_at: formatRfc3339(view.receivedAtMs),
    attempt: view.attempt,
    next_run_at: formatRfc3339(view.nextRunAtMs),
  };
  if (view.leaseUntilMs !== null) item.lease_until = formatRfc3339(view.leaseUntilMs);
  if (view.deadReason !== null) item.dead_reason = view.deadReason;
  addIncluded(item, view);
  return item;
}

export function deadLetterItem(view: MessageView): Record<string, unknown> {
  const item: Record<string, unknown> = {
    id: view.id,
    route: view.route,
    target: view.target,
    received_at: formatRfc3339(view.receivedAtMs),
    attempt: view.attempt,
    dead_reason: view.deadReason ?? "unspecified",
  };
  addIncluded(item, view);
  return item;
}

function addIncluded(item: Record<string, unknown>, view: MessageView): void {
  if (view.payload !== undefined) item.payload_b64 = Buffer.from(view.payload).toString("base64");
  if (view.headers !== undefined) item.headers = view.headers;
  if (view.trace !== undefined) item.trace = view.trace ?? {};
}

export function attemptItem(record: AttemptRecord): Record<string, unknown> {
  const item: Record<string, unknown> = {
    id: record.id,
    event_id: record.messageId,
    route: record.route,
    target: record.target,
    attempt: record.attempt,
    outcome: record.outcome,
    created_at: formatRfc3339(record.createdAtMs),
  };
  if (record.statusCode !== null) item.status_code = record.statusCode;
  if (record.error !== null) item.error = record.error;
  if (record.deadReason !== null) item.dead_reason = record.deadReason;
  return item;
}
