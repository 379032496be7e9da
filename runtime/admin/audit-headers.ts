// The audit headers every Admin mutation must carry, checked against `defaults.publish_policy`
// (docs/api.md "Admin API"; docs/decisions.md D29).
import { isUtf8 } from "node:buffer";
import type { IncomingMessage } from "node:http";
import type { PublishPolicy } from "../../compiler/ir.js";
import { apiError } from "../errors.js";

export const MAX_AUDIT_REASON_CHARS = 512;
export const MAX_AUDIT_ACTOR_CHARS = 256;
export const MAX_REQUEST_ID_CHARS = 256;

/** The `audit` object of every mutation response. */
export interface AuditContext {
  reason: string;
  actor?: string;
  request_id?: string;
}

type HeaderSource = Pick<IncomingMessage, "headers">;

function single(req: HeaderSource, name: string): string | undefined {
  const value = req.headers[name];
  return decodeHeaderText(Array.isArray(value) ? value.join(", ") : value);
}

/**
 * Node hands header values over as Latin-1, one character per byte. An audit reason or actor sent
 * as UTF-8 (what clients send for "Grüße") is decoded as such, so it is recorded, echoed and
 * measured in characters as written; bytes that are not UTF-8 stay Latin-1.
 */
function decodeHeaderText(value: string | undefined): string | undefined {
  if (value === undefined || !/[\x80-\xff]/.test(value)) return value;
  const bytes = Buffer.from(value, "latin1");
  return isUtf8(bytes) ? bytes.toString("utf8") : value;
}

/** The headers as sent, before any rule: the audit record names them even when the request is refused. */
export function readAuditHeaders(req: HeaderSource): { reason?: string; actor?: string; requestId?: string } {
  return {
    reason: single(req, "x-spool-audit-reason"),
    actor: single(req, "x-spool-audit-actor"),
    requestId: single(req, "x-request-id"),
  };
}

/**
 * Applies the rules in a fixed order (reason, actor, request id) so a request missing several
 * headers always gets the same answer. `fail_closed` refuses an unnamed actor when an allowlist
 * exists: without an actor the allowlist decision cannot be made, and closed means refuse.
 */
export function checkAuditHeaders(req: HeaderSource, policy: PublishPolicy): AuditContext {
  const sent = readAuditHeaders(req);
  const reason = sent.reason?.trim() ?? "";
  if (reason === "") throw apiError("audit_reason_required", "mutations need an X-Spool-Audit-Reason header");
  if ([...reason].length > MAX_AUDIT_REASON_CHARS) {
    throw apiError("audit_reason_required", `X-Spool-Audit-Reason is longer than ${MAX_AUDIT_REASON_CHARS} characters`);
  }

  const actor = sent.actor?.trim() || undefined;
  const hasAllowlist = policy.actorAllow.length > 0 || policy.actorPrefix.length > 0;
  if (actor === undefined) {
    if (policy.requireActor) throw apiError("audit_actor_required", "publish_policy.require_actor is on: send X-Spool-Audit-Actor");
    if (policy.failClosed && hasAllowlist) {
      throw apiError("audit_actor_required", "publish_policy.fail_closed is on and an actor allowlist is set: send X-Spool-Audit-Actor");
    }
  } else {
    if ([...actor].length > MAX_AUDIT_ACTOR_CHARS) {
      throw apiError("audit_actor_required", `X-Spool-Audit-Actor is longer than ${MAX_AUDIT_ACTOR_CHARS} characters`);
    }
    if (hasAllowlist && !actorAllowed(actor, policy)) {
      throw apiError("audit_actor_not_allowed", `actor ${JSON.stringify(actor)} is not in publish_policy actor_allow or actor_prefix`);
    }
  }

  const requestId = sent.requestId?.trim() || undefined;
  if (requestId === undefined && policy.requireRequestId) {
    throw apiError("audit_request_id_required", "publish_policy.require_request_id is on: send X-Request-ID");
  }
  if (requestId !== undefined && [...requestId].length > MAX_REQUEST_ID_CHARS) {
    throw apiError("audit_request_id_required", `X-Request-ID is longer than ${MAX_REQUEST_ID_CHARS} characters`);
  }

  const context: AuditContext = { reason };
  if (actor !== undefined) context.actor = actor;
  if (requestId !== undefined) context.request_id = requestId;
  return context;
}

export function actorAllowed(actor: string, policy: Pick<PublishPolicy, "actorAllow" | "actorPrefix">): boolean {
  return policy.actorAllow.includes(actor) || policy.actorPrefix.some((prefix) => actor.startsWith(prefix));
}
