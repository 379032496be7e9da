// The per-request view every Admin handler gets: the config snapshot taken when the request
// arrived (a reload mid-request does not change the rules it is judged by), path parameters,
// the query and a body reader.
import type { IncomingHttpHeaders } from "node:http";
import type { SpoolConfig } from "../../compiler/ir.js";
import type { AuditMetadata } from "./audit-record.js";
import type { AuditContext } from "./audit-headers.js";
import type { AdminDeps } from "./deps.js";

export interface AdminRequest {
  /** The request headers (the audit headers are what mutations read). */
  readonly headers: IncomingHttpHeaders;
  readonly method: string;
  readonly pathname: string;
  readonly query: URLSearchParams;
  /** Decoded path segments named by the route pattern (`application`, `endpoint_name`). */
  readonly params: Readonly<Record<string, string>>;
  readonly config: SpoolConfig;
  readonly deps: AdminDeps;
  /** The raw body, read once (later calls return the same bytes). */
  body(): Promise<Buffer>;
}

export type ReadHandler = (request: AdminRequest) => Promise<unknown>;

export interface MutationResult {
  /** The 200 JSON body; its `audit` field is filled in by the router. */
  body: Record<string, unknown>;
  metadata: AuditMetadata;
}

/** A mutation: audited once, whatever its outcome. `tool` names it in the audit record. */
export interface MutationHandler {
  tool: string;
  run(request: AdminRequest, audit: AuditContext): Promise<MutationResult>;
}
