// The HTTP API (keep/README.md, "HTTP API"). Checks run in the contract's order: (1) token → 401,
// (2) export disabled → 404, (3) capability → 403 whether or not the path exists, (4) missing → 404.
// A secret leaves only after its audit line is on disk; otherwise 503 audit_unavailable.
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isValidPath, normalizePrefix } from "../common/paths.js";
import type { AuditEvent, AuditLog } from "./audit.js";
import { OpenError } from "./crypto.js";
import { parseExportBody } from "./export-body.js";
import type { Policy } from "./policy.js";
import { BodyTooLarge, drainBody, readBody, sendError, sendJson } from "./respond.js";
import type { SecretStore } from "./store.js";
import { bearerToken, identify } from "./tokens.js";

export const MAX_EXPORT_BODY = 1024 * 1024;

const requestIdPrefix = randomBytes(6).toString("hex");
let requestCounter = 0;
/** A request id unique to this process: a random prefix and a counter. */
function nextRequestId(): string {
  return `${requestIdPrefix}${(++requestCounter).toString(16).padStart(8, "0")}`;
}

export interface KeepContext {
  store: SecretStore;
  policy(): Policy;
  audit: AuditLog;
  exportEnabled: boolean;
  log(line: string): void;
}

export function handler(ctx: KeepContext) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    route(ctx, req, res).catch((error: unknown) => {
      ctx.log(`keep: request failed: ${(error as Error).name}`);
      if (!res.headersSent) sendError(res, "internal_error", "internal error");
      else res.destroy();
    });
  };
}

async function route(ctx: KeepContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = (req.url ?? "/").split("?")[0];
  const isExport = req.method === "POST" && url === "/v1/export" && ctx.exportEnabled;
  if (!isExport) await drainBody(req, res, MAX_EXPORT_BODY);
  if (url === "/healthz") {
    if (req.method === "GET" || req.method === "HEAD") sendJson(res, 200, { status: "ok" });
    else sendError(res, "not_found", "no such route");
    return;
  }
  if (!url.startsWith("/v1/")) return sendError(res, "not_found", "no such route");
  const token = bearerToken(req.headers.authorization);
  const identity = token === undefined ? undefined : identify(token, ctx.store.tokens());
  if (identity === undefined || !ctx.policy().hasIdentity(identity)) return sendError(res, "unauthorized", "missing, malformed or unknown bearer token");
  if (req.method === "GET" && url.startsWith("/v1/secrets/")) return readSecret(ctx, res, identity, url.slice("/v1/secrets/".length));
  if (req.method === "GET" && (url === "/v1/list" || url.startsWith("/v1/list/"))) return list(ctx, res, identity, url.slice("/v1/list/".length));
  if (isExport) return exportSet(ctx, req, res, identity);
  sendError(res, "not_found", "no such route");
}

/** Opens every value, then writes one audit line per secret; undefined when it answered already. */
async function openAndAudit(ctx: KeepContext, res: ServerResponse, identity: string, op: AuditEvent["op"], paths: string[]): Promise<Buffer[] | undefined> {
  let values: (Buffer | undefined)[];
  try {
    values = paths.map((p) => ctx.store.get(p));
  } catch (error) {
    if (!(error instanceof OpenError)) throw error;
    ctx.log(`keep: ${error.message}; nothing served`);
    sendError(res, "internal_error", "a stored value failed its integrity check; nothing was served");
    return undefined;
  }
  if (values.some((v) => v === undefined)) {
    sendError(res, "not_found", paths.length === 1 ? "no such path" : "at least one path does not exist; nothing was served");
    return undefined;
  }
  const request_id = nextRequestId();
  try {
    await ctx.audit.append(paths.map((path) => ({ identity, op, path, request_id })));
  } catch (error) {
    ctx.log(`keep: audit write failed (${(error as NodeJS.ErrnoException).code ?? "error"}); nothing served`);
    sendError(res, "audit_unavailable", "the audit entry could not be written; nothing was served");
    return undefined;
  }
  res.setHeader("X-Request-Id", request_id);
  return values as Buffer[];
}

async function readSecret(ctx: KeepContext, res: ServerResponse, identity: string, path: string): Promise<void> {
  if (!isValidPath(path)) return sendError(res, "not_found", "no such path");
  if (!ctx.policy().allows(identity, "read", path)) return sendError(res, "forbidden", "the policy denies read on this path");
  const values = await openAndAudit(ctx, res, identity, "read", [path]);
  if (values) sendJson(res, 200, { value: values[0].toString("utf8") });
}

function list(ctx: KeepContext, res: ServerResponse, identity: string, given: string): void {
  const prefix = normalizePrefix(given);
  if (prefix === undefined) return sendError(res, "not_found", "no such prefix");
  const policy = ctx.policy();
  sendJson(res, 200, { paths: ctx.store.paths(prefix).filter((p) => policy.allows(identity, "list", p)) });
}

async function exportSet(ctx: KeepContext, req: IncomingMessage, res: ServerResponse, identity: string): Promise<void> {
  let body: Buffer;
  try {
    body = await readBody(req, MAX_EXPORT_BODY);
  } catch (error) {
    if (error instanceof BodyTooLarge) return sendError(res, "bad_request", "the body exceeds 1 MiB");
    throw error;
  }
  const paths = parseExportBody(body);
  if (typeof paths === "string") return sendError(res, "bad_request", paths);
  const policy = ctx.policy();
  if (paths.some((p) => !policy.allows(identity, "read", p))) return sendError(res, "forbidden", "the policy denies read on at least one path; nothing was served");
  const values = await openAndAudit(ctx, res, identity, "export", paths);
  if (values) sendJson(res, 200, { secrets: paths.map((path, i) => ({ path, value: values[i].toString("utf8") })) });
}
