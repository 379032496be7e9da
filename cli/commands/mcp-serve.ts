// `spool mcp serve` (docs/mcp.md): an MCP server on stdin/stdout for AI tooling, until stdin ends.
import { LineTransport } from "../mcp/transport.js";
import { createMcpServer } from "../mcp/server.js";
import { ROLES, type Role } from "../mcp/session.js";
import { spoolVersion } from "../version.js";

export interface McpServeFlags {
  config: string;
  db: string;
  role: string;
  enableMutations?: boolean;
  enableRuntimeControl?: boolean;
  principal?: string;
  pidFile: string;
  adminEndpointAllowlist?: string;
}

/** Serves until stdin ends; resolves with the exit code (2: a flag is wrong). */
export async function runMcpServe(flags: McpServeFlags): Promise<number> {
  if (!(ROLES as readonly string[]).includes(flags.role)) {
    process.stderr.write(`spool mcp serve: --role must be read, operate or admin, got ${JSON.stringify(flags.role)}\n`);
    return 2;
  }
  const allowlist = (flags.adminEndpointAllowlist ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  const mcp = createMcpServer(
    {
      configPath: flags.config,
      dbPath: flags.db,
      role: flags.role as Role,
      enableMutations: flags.enableMutations === true,
      enableRuntimeControl: flags.enableRuntimeControl === true,
      principal: flags.principal,
      pidFile: flags.pidFile,
      allowlist,
      spoolCommand: [process.execPath, process.argv[1]],
      writeAudit: (line) => process.stderr.write(line + "\n"),
    },
    spoolVersion,
  );
  const transport = new LineTransport(process.stdin, process.stdout);
  transport.beforeClose = () => mcp.idle();
  await mcp.server.connect(transport);
  // connect() installs its own onclose; chain ours after it.
  const sdkClose = transport.onclose;
  await new Promise<void>((resolve) => {
    transport.onclose = () => {
      sdkClose?.();
      resolve();
    };
  });
  await mcp.state.close();
  return 0;
}
