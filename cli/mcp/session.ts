// The flags of `spool mcp serve` (docs/mcp.md "Flags"), as the server holds them for the session.

export const ROLES = ["read", "operate", "admin"] as const;
export type Role = (typeof ROLES)[number];

export function roleRank(role: Role): number {
  return ROLES.indexOf(role);
}

export interface McpSession {
  /** The only config the tools read or write, read afresh on every call. */
  configPath: string;
  /** The SQLite file of the sqlite backend; never created. */
  dbPath: string;
  role: Role;
  enableMutations: boolean;
  enableRuntimeControl: boolean;
  principal: string | undefined;
  pidFile: string;
  /** --admin-endpoint-allowlist entries as given (empty: no restriction). */
  allowlist: readonly string[];
  /** How `instance_start` runs `spool run`: the program and the arguments before `run`. */
  spoolCommand: readonly string[];
  /** Where audit lines go (stderr). */
  writeAudit(line: string): void;
}
