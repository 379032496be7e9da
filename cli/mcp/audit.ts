// The audit line of a mutating tool (docs/mcp.md "Audit"): one JSON line on stderr per call,
// whatever its outcome, with `input_hash` over the arguments as canonical JSON.
import { createHash } from "node:crypto";
import type { AuditFields } from "../../runtime/admin/audit-record.js";
import { canonicalJson } from "../../runtime/admin/secrets.js";
import { redactProse } from "../../runtime/observability/redact.js";
import type { AuditMetadataOut } from "./tool.js";

/** `sha256:` + hex SHA-256 of the canonical arguments. */
export function argumentsHash(args: Record<string, unknown>): string {
  return `sha256:${createHash("sha256").update(canonicalJson(args)).digest("hex")}`;
}

/** An MCP audit line: the Admin API's fields (AuditFields), its outcome one of three, and the error of a failed call. */
export interface AuditLine extends AuditFields {
  result: "ok" | "denied" | "error";
  error?: string;
  metadata: AuditMetadataOut;
}

/** The line as written: credentials typed into the free-text fields masked, as the Admin API's audit lines do. */
export function auditLineText(line: AuditLine): string {
  const masked: AuditLine = { ...line };
  for (const key of ["reason", "actor", "request_id", "error"] as const) {
    if (masked[key] !== undefined) masked[key] = redactProse(masked[key]!);
  }
  return JSON.stringify(masked);
}
