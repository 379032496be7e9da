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
  /** The trace context of the request's span when tracing runs (a publish stores it with the message). */
  readonly trace?: Record<string, string>;
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

export type MutationResult =
  | {
      /** The 200 JSON body; its `audit` field is filled in by the router. */
      body: Record<string, unknown>;
      metadata: AuditMetadata;
      status?: undefined;
    }
  | {
      /** Answered exactly as given (no `audit` echo): 201 with the body, 204 without one (runtime secrets). */
      status: 201 | 204;
      body: Record<string, unknown> | null;
      metadata: AuditMetadata;
    };

/** A mutation: audited once, whatever its outcome. `tool` names it in the audit record. */
export interface MutationHandler {
  tool: string;
  run(request: AdminRequest, audit: AuditContext): Promise<MutationResult>;
  /** The audit record's input_hash when not the default (method, path with query, body). */
  inputHash?(request: AdminRequest, body: Buffer): string;
  /** A refused request's audit metadata when not `{kind: "refused", operation: tool}`. */
  refusedMetadata?(request: AdminRequest, body: Buffer): AuditMetadata;
}
