// A minimal MCP client for tests: spawns the BUILT `spool mcp serve` and speaks newline-delimited
// JSON-RPC 2.0 on its stdin/stdout, as desktop clients do. stderr (the audit lines) is kept.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { spoolBin } from "../helpers/repo.js";
import type { AuditLine } from "../../cli/mcp/audit.js";

export interface RpcReply {
  id?: number | string | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

export interface ToolReply {
  isError: boolean;
  text: string;
  structured: Record<string, unknown> | undefined;
}

/** An audit line as read back from stderr: the fields of cli/mcp/audit.ts, metadata left open. */
export type McpAuditLine = Omit<AuditLine, "metadata"> & { metadata: Record<string, unknown> };

export class McpClient {
  private nextId = 1;
  private stdoutBuffer = "";
  private stderrText = "";
  private readonly waiting = new Map<number | string | null, (reply: RpcReply) => void>();
  /** Replies with no request waiting for them (id null: parse errors). */
  readonly unsolicited: RpcReply[] = [];
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      this.stdoutBuffer += chunk;
      let newline: number;
      while ((newline = this.stdoutBuffer.indexOf("\n")) >= 0) {
        const line = this.stdoutBuffer.slice(0, newline);
        this.stdoutBuffer = this.stdoutBuffer.slice(newline + 1);
        const reply = JSON.parse(line) as RpcReply;
        const waiter = this.waiting.get(reply.id ?? null);
        if (waiter && reply.id !== null && reply.id !== undefined) {
          this.waiting.delete(reply.id);
          waiter(reply);
        } else this.unsolicited.push(reply);
      }
    });
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => (this.stderrText += chunk));
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  static start(args: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}): McpClient {
    const child = spawn(process.execPath, [spoolBin, "mcp", "serve", ...args], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ["pipe", "pipe", "pipe"] });
    return new McpClient(child);
  }

  /** A started and initialized session. */
  static async session(args: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<McpClient> {
    const client = McpClient.start(args, options);
    const reply = await client.request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "spool-test", version: "1" } });
    if (!reply.result) throw new Error(`initialize failed: ${JSON.stringify(reply)}\n${client.stderr()}`);
    client.notify("notifications/initialized");
    return client;
  }

  writeLine(line: string): void {
    this.child.stdin!.write(line + "\n");
  }

  request(method: string, params?: unknown, timeoutMs = 30_000): Promise<RpcReply> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no reply to ${method} within ${timeoutMs} ms\n${this.stderrText}`)), timeoutMs);
      this.waiting.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.writeLine(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }));
    });
  }

  notify(method: string, params?: unknown): void {
    this.writeLine(JSON.stringify({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) }));
  }

  async toolNames(): Promise<string[]> {
    const reply = await this.request("tools/list");
    return ((reply.result?.tools ?? []) as { name: string }[]).map((tool) => tool.name).sort();
  }

  async call(name: string, args?: Record<string, unknown>): Promise<ToolReply> {
    const reply = await this.request("tools/call", { name, ...(args === undefined ? {} : { arguments: args }) });
    if (reply.error) throw new Error(`tools/call ${name}: JSON-RPC error ${reply.error.code} ${reply.error.message}`);
    const result = reply.result as { content: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
    return { isError: result.isError === true, text: result.content[0].text, structured: result.structuredContent };
  }

  /** A successful call's structured result (fails the test with the message otherwise). */
  async ok(name: string, args?: Record<string, unknown>): Promise<Record<string, unknown>> {
    const reply = await this.call(name, args);
    if (reply.isError) throw new Error(`${name} failed: ${reply.text}`);
    return reply.structured!;
  }

  stderr(): string {
    return this.stderrText;
  }

  auditLines(): McpAuditLine[] {
    return this.stderrText
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as McpAuditLine)
      .filter((line) => typeof line.input_hash === "string");
  }

  /** Ends stdin (the client going away) and waits for the exit code. */
  async close(): Promise<number | null> {
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 15_000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}

/** input_hash as the contract defines it, computed here independently of the server's code. */
export function expectedHash(args: Record<string, unknown>): string {
  const canonical = (value: unknown): string => {
    if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
    if (value !== null && typeof value === "object") {
      return `{${Object.keys(value)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
        .join(",")}}`;
    }
    return JSON.stringify(value);
  };
  return `sha256:${createHash("sha256").update(canonical(args)).digest("hex")}`;
}
