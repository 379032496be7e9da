// `spool mcp serve` (docs/mcp.md): the SDK's low-level Server on the newline stdio transport, with
// Spool's own initialize (the protocol versions it answers), tools/list filtered to what this session
// may call, and tools/call in the contract's order: access (flag, role, principal), strict arguments,
// the tool, then exactly one audit line per mutating call whatever happened.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ADMIN_TOOLS } from "./admin-tools.js";
import { checkArgs } from "./args.js";
import { argumentsHash, auditLineText, type AuditLine } from "./audit.js";
import { CONFIG_READ_TOOLS } from "./config-tools.js";
import { CallContext, SessionState, type CallAudit } from "./context.js";
import { healthTool } from "./health-tool.js";
import { INSTANCE_TOOLS } from "./instance-tools.js";
import { QUEUE_MUTATION_TOOLS, QUEUE_READ_TOOLS } from "./queue-tools.js";
import { roleRank, type McpSession } from "./session.js";
import { ToolError, type Args, type AuditMetadataOut, type ToolDef } from "./tool.js";

export const PROTOCOL_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18"] as const;
export const DEFAULT_PROTOCOL_VERSION = "2025-06-18";

export const TOOLS: readonly ToolDef[] = [...CONFIG_READ_TOOLS, healthTool, ...QUEUE_READ_TOOLS, ...QUEUE_MUTATION_TOOLS, ...ADMIN_TOOLS, ...INSTANCE_TOOLS];

/** Why this session may not call `tool` (flag, then role, then principal), or undefined. */
export function accessRefusal(tool: ToolDef, session: McpSession): string | undefined {
  if (tool.gate === "mutations" && !session.enableMutations) return `${tool.name} needs --enable-mutations`;
  if (tool.gate === "runtime_control" && !session.enableRuntimeControl) return `${tool.name} needs --enable-runtime-control`;
  if (roleRank(session.role) < roleRank(tool.role)) return `${tool.name} needs role ${tool.role}; this session's role is ${session.role}`;
  if (tool.mutating && !session.principal) return `${tool.name} changes state and needs --principal (who is acting)`;
  return undefined;
}

function success(result: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
}

function failure(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** Who and why of a mutating call; `actor` must be the principal (omitted: the principal). */
function callAudit(args: Args, session: McpSession): CallAudit | undefined {
  const principal = session.principal!;
  if (args.actor !== undefined && args.actor !== principal) {
    throw new ToolError(`argument "actor" must equal --principal ${JSON.stringify(principal)}, got ${JSON.stringify(args.actor)}`);
  }
  if (typeof args.reason !== "string") return undefined;
  if (args.reason.trim() === "") throw new ToolError('argument "reason" must not be blank');
  const audit: CallAudit = { reason: args.reason, actor: principal };
  if (typeof args.request_id === "string") audit.request_id = args.request_id;
  return audit;
}

export interface McpServer {
  server: Server;
  state: SessionState;
  /** Resolves once no tool call is running (stdin's end still lets the calls in flight answer). */
  idle(): Promise<void>;
}

export function createMcpServer(session: McpSession, version: string): McpServer {
  const server = new Server({ name: "spool", version }, { capabilities: { tools: { listChanged: false } } });
  const state = new SessionState(session);
  const inFlight = new Set<Promise<unknown>>();

  server.setRequestHandler(InitializeRequestSchema, async (request) => {
    const asked = request.params.protocolVersion;
    return {
      protocolVersion: (PROTOCOL_VERSIONS as readonly string[]).includes(asked) ? asked : DEFAULT_PROTOCOL_VERSION,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: "spool", version },
    };
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.filter((tool) => accessRefusal(tool, session) === undefined).map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.input,
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const call = callTool(request.params.name, request.params.arguments);
    inFlight.add(call);
    void call.finally(() => inFlight.delete(call)).catch(() => undefined);
    return call;
  });

  async function callTool(name: string, given: Record<string, unknown> | undefined): Promise<CallToolResult> {
    const tool = TOOLS.find((t) => t.name === name);
    // An Error with a code, not McpError, whose message would read "MCP error -32602: …" inside a -32602 error.
    if (!tool) throw Object.assign(new Error(`unknown tool ${JSON.stringify(name)}: not a Spool tool`), { code: ErrorCode.InvalidParams });
    const args = (given ?? {}) as Args;
    const startedMs = Date.now();
    const audited = tool.mutating;
    const record = (result: AuditLine["result"], metadata: AuditMetadataOut, error?: string) => {
      if (!audited) return;
      const line: AuditLine = {
        timestamp: new Date().toISOString(),
        principal: session.principal ?? "",
        role: session.role,
        tool: tool.name,
        input_hash: argumentsHash(tool.name === "rotate_secret" ? withoutValue(args) : args),
        result,
        duration_ms: Math.max(0, Date.now() - startedMs),
        metadata,
      };
      for (const key of ["reason", "actor", "request_id"] as const) if (typeof args[key] === "string") line[key] = args[key] as string;
      if (line.actor === undefined && session.principal && result !== "denied") line.actor = session.principal;
      if (error !== undefined) line.error = error;
      session.writeAudit(auditLineText(line));
    };
    const refused: AuditMetadataOut = { kind: "refused", operation: tool.name };

    const denied = accessRefusal(tool, session);
    if (denied) {
      record("denied", refused, denied);
      return failure(denied);
    }
    try {
      checkArgs(tool.input, args);
      tool.check?.(args);
      const audit = audited ? callAudit(args, session) : undefined;
      const outcome = await tool.run(args, new CallContext(state, audit));
      record("ok", outcome.metadata ?? refused);
      return success(outcome.result);
    } catch (thrown) {
      const message = thrown instanceof Error ? thrown.message : String(thrown);
      record("error", thrown instanceof ToolError && thrown.metadata ? thrown.metadata : refused, message);
      return failure(thrown instanceof ToolError ? message : `${tool.name} failed: ${message}`);
    }
  }

  return {
    server,
    state,
    async idle() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}

function withoutValue(args: Args): Args {
  const { value: _value, ...rest } = args;
  return rest;
}
