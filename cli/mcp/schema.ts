// Argument schemas the tools share (docs/mcp.md "Tools").
import { LABEL_PATTERN } from "../../compiler/index.js";
import type { ObjectSchema, PropSchema } from "./tool.js";

export const str = (description: string, extra: Partial<Extract<PropSchema, { type: "string" }>> = {}): PropSchema => ({ type: "string", description, ...extra });
export const int = (description: string, minimum: number, maximum: number): PropSchema => ({ type: "integer", description, minimum, maximum });
export const bool = (description: string): PropSchema => ({ type: "boolean", description });

export const LABEL = (what: string) => str(`${what} (a label: ${LABEL_PATTERN.source})`, { minLength: 1, maxLength: 128 });
export const SELECTOR = {
  route: str('Route path, starting with "/"', { minLength: 1 }),
  application: LABEL("Managed application, with endpoint_name"),
  endpoint_name: LABEL("Managed endpoint name, with application"),
} as const;
export const LIST = {
  limit: int("Most items to return (default 100)", 1, 1000),
  before: str("Only items received before this RFC 3339 instant"),
  include_payload: bool("Include payload_b64"),
  include_headers: bool("Include the stored headers"),
  include_trace: bool("Include trace context"),
} as const;
export const AUDIT = {
  reason: str("Why (audited), 1..512 characters", { minLength: 1, maxLength: 512 }),
  actor: str("Who; must equal --principal (default: the principal)", { maxLength: 256 }),
  request_id: str("Request id for the audit trail", { maxLength: 256 }),
} as const;
export const PATH = { path: str("The config path; must equal --config") } as const;

export function object(properties: Record<string, PropSchema>, required: readonly string[] = []): ObjectSchema {
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}
