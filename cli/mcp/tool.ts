// What a tool is (docs/mcp.md "Tools"): its name, the role and flag it needs, whether it mutates, its
// strict input schema, and what it runs. A tool's refusal is a ToolError: the message the client
// reads, and the audit metadata when there is any to record.
import type { CallContext } from "./context.js";
import type { Role } from "./session.js";

/** The subset of JSON Schema the tools use; `check` (args.ts) enforces exactly this. */
export type PropSchema =
  | { type: "string"; description?: string; enum?: readonly string[]; minLength?: number; maxLength?: number; pattern?: string }
  | { type: "integer"; description?: string; minimum?: number; maximum?: number }
  | { type: "boolean"; description?: string }
  | { type: "array"; description?: string; items: PropSchema; minItems?: number; maxItems?: number }
  | ObjectSchema;

export interface ObjectSchema {
  type: "object";
  description?: string;
  properties: Record<string, PropSchema>;
  required?: readonly string[];
  /** A map of string values (headers) instead of fixed properties. */
  additionalProperties: false | { type: "string" };
}

export type Args = Record<string, unknown>;

export type AuditMetadataOut = Record<string, unknown> & { kind: string };

export interface ToolOutcome {
  result: Record<string, unknown>;
  /** The audit metadata of a mutating tool's success. */
  metadata?: AuditMetadataOut;
}

export interface ToolDef {
  name: string;
  description: string;
  role: Role;
  /** The flag that must be on for the tool to exist in this session. */
  gate?: "mutations" | "runtime_control";
  /** Audited, needs --principal and a reason (docs/mcp.md "Audit"). */
  mutating: boolean;
  input: ObjectSchema;
  /** Argument rules a schema cannot say (selectors, per-operation keys); throws ToolError. */
  check?(args: Args): void;
  run(args: Args, ctx: CallContext): Promise<ToolOutcome>;
}

export class ToolError extends Error {
  constructor(
    message: string,
    readonly metadata?: AuditMetadataOut,
  ) {
    super(message);
    this.name = "ToolError";
  }
}
