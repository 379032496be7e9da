// The Admin API as one mountable handler (docs/api.md "Admin API"). The app
// applies the admin bearer token and answers /healthz; everything else under the admin prefix
// comes here. Reads answer 200 with JSON; every mutation is checked for its audit headers and
// writes exactly one audit record, refused or not (docs/decisions.md D29).
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { answerStoreError, ApiError, apiError, toApiError } from "../errors.js";
import { ClientGoneError, readBody } from "../http/body.js";
import { sendEmpty, sendError, sendJson } from "../http/respond.js";
import type { AuditMetadata, AuditRecord } from "./audit-record.js";
import { readAuditHeaders, type AuditContext } from "./audit-headers.js";
import { DEFAULT_ADMIN_MAX_BODY_BYTES, type AdminDeps } from "./deps.js";
import { countPublishRefusal } from "./publish.js";
import { adminRequest, resolveAdminOperation, runAdminMutation } from "./operations.js";
import { requestTraceContext, setRequestRoute } from "../tracing/tracing.js";

export type { AdminDeps, ApplyConfigOutcome } from "./deps.js";
export type { AuditRecord } from "./audit-record.js";
export { computeTrendSignals, healthTrendSignals } from "./diagnostics.js";
export { analyzeTrendSignals, trendSignalsJson } from "./trend-signals.js";

/**
 * Handles `path` (the request path without the admin prefix and without the query, as the
 * listener's mounts pass it); the query is read from `req.url`. False = not an Admin path.
 */
export type AdminApiHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean>;

export const AUDIT_ROLE = "admin";

export function createAdminApi(deps: AdminDeps): AdminApiHandler {
  const maxBodyBytes = deps.maxBodyBytes ?? DEFAULT_ADMIN_MAX_BODY_BYTES;

  const answerFailure = (res: ServerResponse, thrown: unknown): ApiError => {
    const error = toApiError(answerStoreError(thrown, "admin"));
    if (error.code === "internal_error" && !(thrown instanceof ApiError)) deps.onUnexpectedError?.(thrown);
    sendError(res, error);
    return error;
  };

  return async function handleAdmin(req, res, path) {
    let url: URL;
    try {
      url = new URL(path + querySuffix(req.url), "http://admin.invalid");
    } catch {
      return false;
    }
    const method = (req.method ?? "GET").toUpperCase();
    const operation = resolveAdminOperation(method, url.pathname);
    if (operation.kind === "unknown_path") return false;
    setRequestRoute(req, operation.template);
    if (operation.kind === "method_not_allowed") {
      const { allow } = operation;
      sendError(res, apiError("method_not_allowed", `${method} is not allowed on ${url.pathname}; use ${allow}`, { headers: { Allow: allow } }));
      return true;
    }

    let bodyRead: Promise<Buffer> | undefined;
    const request = adminRequest(
      deps,
      { method, pathname: url.pathname, query: url.searchParams, headers: req.headers, trace: requestTraceContext(req), body: () => (bodyRead ??= readBody(req, { maxBytes: maxBodyBytes })) },
      operation.params,
    );

    if (operation.kind === "read") {
      try {
        sendJson(res, 200, await operation.handler(request));
      } catch (thrown) {
        answerFailure(res, thrown);
      }
      return true;
    }

    const mutation = operation.handler;
    const startedMs = deps.clock.now();
    // The body is read before any rule so the audit record hashes what was actually sent.
    let bodyBytes: Buffer = Buffer.alloc(0);
    let audit: AuditContext | undefined;
    try {
      bodyBytes = await request.body();
      const outcome = await runAdminMutation(request, mutation, (checked) => (audit = checked));
      if (outcome.status === 204) sendEmpty(res, 204);
      else sendJson(res, outcome.status, outcome.body);
      writeAudit("ok", outcome.metadata);
    } catch (thrown) {
      if (thrown instanceof ClientGoneError) {
        // Nothing was done and nobody waits for an answer; the attempt stays on the audit trail.
        res.destroy();
        writeAudit("client_gone", refusedMetadata());
        return true;
      }
      const error = answerFailure(res, thrown);
      if (operation.publish) countPublishRefusal(deps, error, operation.scopedPublish);
      writeAudit(error.code, refusedMetadata());
    }
    return true;

    function refusedMetadata(): AuditRecord["metadata"] {
      return mutation.refusedMetadata?.(request, bodyBytes) ?? { kind: "refused", operation: mutation.tool };
    }

    function writeAudit(result: string, metadata: AuditRecord["metadata"] | AuditMetadata): void {
      const sent = readAuditHeaders(req);
      const actor = audit?.actor ?? (sent.actor?.trim() || undefined);
      const record: AuditRecord = {
        timestamp: new Date(deps.clock.now()).toISOString(),
        principal: actor ?? (request.config.adminApi.tokens.length > 0 ? "admin_token" : "anonymous"),
        role: AUDIT_ROLE,
        tool: mutation.tool,
        input_hash: mutation.inputHash?.(request, bodyBytes) ?? inputHash(method, url.pathname + url.search, bodyBytes),
        result,
        duration_ms: Math.max(0, Math.round(deps.clock.now() - startedMs)),
        metadata,
      };
      const reason = audit?.reason ?? (sent.reason?.trim() || undefined);
      if (reason !== undefined) record.reason = reason.slice(0, 512);
      if (actor !== undefined) record.actor = actor.slice(0, 256);
      const requestId = audit?.request_id ?? (sent.requestId?.trim() || undefined);
      if (requestId !== undefined) record.request_id = requestId.slice(0, 256);
      deps.audit(record);
    }
  };
}

/** `?…` of a request target, or "" (the mounts strip the query from the path they pass on). */
function querySuffix(target: string | undefined): string {
  const question = target?.indexOf("?") ?? -1;
  return question < 0 ? "" : target!.slice(question);
}

/** `sha256:<hex>` over method, path with query, and body: equal requests hash equal. */
export function inputHash(method: string, pathWithQuery: string, body: Buffer): string {
  const hash = createHash("sha256");
  hash.update(`${method} ${pathWithQuery}\n`);
  hash.update(body);
  return `sha256:${hash.digest("hex")}`;
}
