// The audit record every Admin mutation emits (docs/decisions.md D29:
// recognised by `tool` and `input_hash`, `metadata` always an object).

export type AuditMetadata =
  | { kind: "id_mutation"; operation: string; ids_requested: number; ids_unique: number; changed: number }
  | { kind: "filter_mutation"; operation: string; matched: number; changed: number; preview_only: boolean; scope?: AuditScope }
  | { kind: "config_mutation"; operation: string; mode: "file_rewrite"; outcome: string; application: string; endpoint_name: string; route?: string }
  | { kind: "publish"; operation: string; mode: "direct" | "managed"; items: number; published: number; scope?: AuditScope }
  | { kind: "secret_mutation"; operation: "add" | "delete"; pool: string; secret_id?: string; not_before?: string; not_after?: string };

export interface AuditScope {
  application: string;
  endpoint_name: string;
  route: string;
}

/** The fields every audit line carries, from the Admin API and the MCP server alike (docs/decisions.md D29). */
export interface AuditFields {
  /** RFC 3339. */
  timestamp: string;
  principal: string;
  role: string;
  tool: string;
  /** `sha256:<hex>` of the request (method, path, body); runtime secrets: of the body without `value`. */
  input_hash: string;
  /** "ok" or the error code the request was refused with (docs/decisions.md D29). */
  result: string;
  duration_ms: number;
  /** Who and why, from the audit headers (absent fields were not sent). */
  reason?: string;
  actor?: string;
  request_id?: string;
}

export interface AuditRecord extends AuditFields {
  metadata: AuditMetadata | { kind: "refused"; operation: string };
}
