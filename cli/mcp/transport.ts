// The standard MCP stdio transport (docs/mcp.md "Protocol"): one JSON-RPC 2.0 message per
// `\n`-terminated UTF-8 line on stdin and stdout. The SDK's own stdio transport drops a line that
// is not JSON or not a JSON-RPC message without a word; this one answers it as JSON-RPC asks
// (-32700 parse error, -32600 invalid request, `id: null` when none can be read) and reports stdin's
// end, so the server exits when its client goes.
import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** One line larger than this (a runaway client) is answered -32600 and dropped. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private buffer: Buffer = Buffer.alloc(0);
  private closed = false;
  /** Awaited when stdin ends, before the close: the calls already read get to answer. */
  beforeClose?: () => Promise<void>;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
  ) {}

  async start(): Promise<void> {
    this.input.on("data", (chunk: Buffer) => this.receive(chunk));
    this.input.on("end", () => {
      // The last lines' handlers start on a later tick; let them, then wait for them.
      setImmediate(() => void (this.beforeClose?.() ?? Promise.resolve()).finally(() => this.close()));
    });
    this.input.on("error", (error: Error) => this.onerror?.(error));
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    let newline: number;
    while ((newline = this.buffer.indexOf(0x0a)) >= 0) {
      const line = this.buffer.subarray(0, newline).toString("utf8").replace(/\r$/, "");
      this.buffer = this.buffer.subarray(newline + 1);
      this.handleLine(line);
    }
    if (this.buffer.length > MAX_LINE_BYTES) {
      this.buffer = Buffer.alloc(0);
      this.reply(null, -32600, `a message is longer than ${MAX_LINE_BYTES} bytes`);
    }
  }

  private handleLine(line: string): void {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.reply(null, -32700, `parse error: ${(error as Error).message}`);
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = readableId(value);
      this.reply(id, -32600, "invalid request: expected one JSON-RPC 2.0 object with jsonrpc \"2.0\" and a method (batches are not supported)");
      return;
    }
    this.onmessage?.(parsed.data);
  }

  private reply(id: string | number | null, code: number, message: string): void {
    void this.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(JSON.stringify(message) + "\n")) resolve();
      else this.output.once("drain", () => resolve());
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.pause();
    this.onclose?.();
  }
}

function readableId(value: unknown): string | number | null {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
