// The Admin API's operations without HTTP: which operation a method and path name, the request view
// it runs on, and a mutation's run with its audit-header rules. The HTTP binding (index.ts) and the
// MCP server's SQLite binding (cli/mcp/) both call these, so each operation has one implementation
// (docs/mcp.md "One implementation").
import type { IncomingHttpHeaders } from "node:http";
import { checkAuditHeaders, type AuditContext } from "./audit-headers.js";
import type { AuditMetadata } from "./audit-record.js";
import type { AdminDeps } from "./deps.js";
import type { AdminRequest, MutationHandler, ReadHandler } from "./request.js";
import { matchRoute, type Method, type RouteEntry } from "./routes.js";

export type AdminOperation =
  | { kind: "unknown_path" }
  /** A known path with another method: `allow` lists the methods it takes (GET also as HEAD). */
  | { kind: "method_not_allowed"; allow: string; template: string }
  | { kind: "read"; handler: ReadHandler; params: Record<string, string>; template: string }
  | { kind: "mutation"; handler: MutationHandler; params: Record<string, string>; publish: boolean; scopedPublish: boolean; template: string };

/** The operation `method` on `pathname` (the path under the admin prefix, without the query) names. */
export function resolveAdminOperation(method: string, pathname: string): AdminOperation {
  const match = matchRoute(pathname);
  if (!match) return { kind: "unknown_path" };
  const template = routeTemplate(match.entry);
  // HEAD is GET without the body (RFC 9110 §9.3.2; node:http leaves the body out of the reply).
  const handler = match.entry.methods[(method === "HEAD" ? "GET" : method) as Method];
  if (!handler) {
    const methods = Object.keys(match.entry.methods);
    return { kind: "method_not_allowed", allow: (methods.includes("GET") ? [...methods, "HEAD"] : methods).join(", "), template };
  }
  if ("read" in handler) return { kind: "read", handler: handler.read, params: match.params, template };
  return { kind: "mutation", handler: handler.mutation, params: match.params, publish: handler.publish === true, scopedPublish: handler.scopedPublish === true, template };
}

/** The route's pattern with its parameters in braces (`/applications/{application}/…`), for span names. */
function routeTemplate(entry: RouteEntry): string {
  return "/" + entry.pattern.map((segment) => (segment.startsWith(":") ? `{${segment.slice(1)}}` : segment)).join("/");
}

/** What an operation is called with, whatever carried it. */
export interface AdminCall {
  method: string;
  pathname: string;
  query: URLSearchParams;
  /** The audit headers (x-spool-audit-reason, x-spool-audit-actor, x-request-id), lower-case names. */
  headers: IncomingHttpHeaders;
  /** The trace context of the call's span (tracing on), stored with what a publish writes. */
  trace?: Record<string, string>;
  /** The body bytes, read once. */
  body(): Promise<Buffer>;
}

/** The per-request view, with the config snapshot taken now (a reload mid-request changes nothing). */
export function adminRequest(deps: AdminDeps, call: AdminCall, params: Record<string, string>): AdminRequest {
  return { headers: call.headers, trace: call.trace, method: call.method, pathname: call.pathname, query: call.query, params, config: deps.getConfig(), deps, body: call.body };
}

export interface MutationOutcome {
  /** 200 with `audit` in the body; 201 or 204 exactly as the mutation answered (runtime secrets). */
  status: 200 | 201 | 204;
  body: Record<string, unknown> | null;
  metadata: AuditMetadata;
}

/**
 * A mutation's audit headers checked against the snapshot's publish policy, then the mutation run. Throws the
 * refusal (an ApiError, or a store error for answerStoreError); `onAudit` gets the checked headers as
 * soon as they pass, so a refusal after them is still recorded with them.
 */
export async function runAdminMutation(request: AdminRequest, handler: MutationHandler, onAudit?: (audit: AuditContext) => void): Promise<MutationOutcome> {
  const audit = checkAuditHeaders(request, request.config.defaults.publishPolicy);
  onAudit?.(audit);
  const result = await handler.run(request, audit);
  if (result.status !== undefined) return { status: result.status, body: result.body, metadata: result.metadata };
  return { status: 200, body: { ...result.body, audit }, metadata: result.metadata };
}
