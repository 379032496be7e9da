// A minimal LSP client over a real child process's stdio: Content-Length framing, requests with ids,
// notifications, and a wait for the next notification that matches. Every message received is kept
// (`received`), so a test can check what the server ever sent.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";

export interface LspMessage {
  readonly id?: number;
  readonly method?: string;
  readonly params?: unknown;
  readonly result?: unknown;
  readonly error?: { code: number; message: string };
}

export class LspClient {
  readonly received: string[] = [];
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = Buffer.alloc(0);
  private nextId = 1;
  private readonly pending = new Map<number, (m: LspMessage) => void>();
  private readonly waiters: { match: (m: LspMessage) => boolean; resolve: (m: LspMessage) => void }[] = [];
  private readonly notifications: LspMessage[] = [];
  stderr = "";

  constructor(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
    this.child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.on("data", (chunk: Buffer) => this.onData(chunk));
    this.child.stderr.on("data", (chunk: Buffer) => (this.stderr += chunk.toString("utf8")));
  }

  private onData(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf("\r\n\r\n");
      if (headerEnd < 0) return;
      const length = Number(/Content-Length: (\d+)/i.exec(this.buffer.subarray(0, headerEnd).toString("ascii"))?.[1]);
      if (this.buffer.length < headerEnd + 4 + length) return;
      const body = this.buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString("utf8");
      this.buffer = this.buffer.subarray(headerEnd + 4 + length);
      this.received.push(body);
      const message = JSON.parse(body) as LspMessage;
      if (message.id !== undefined && message.method === undefined) {
        this.pending.get(message.id)?.(message);
        this.pending.delete(message.id);
      } else if (message.id !== undefined && message.method !== undefined) {
        // A request from the server (e.g. client/registerCapability): answer it empty.
        this.write({ jsonrpc: "2.0", id: message.id, result: null });
      } else {
        const waiter = this.waiters.findIndex((w) => w.match(message));
        if (waiter >= 0) this.waiters.splice(waiter, 1)[0].resolve(message);
        else this.notifications.push(message);
      }
    }
  }

  private write(message: object): void {
    const body = JSON.stringify(message);
    this.child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }

  async request<T>(method: string, params: unknown): Promise<T> {
    const id = this.nextId++;
    const answer = new Promise<LspMessage>((resolve) => this.pending.set(id, resolve));
    this.write({ jsonrpc: "2.0", id, method, params });
    const message = await withTimeout(answer, `${method} answer`);
    if (message.error) throw new Error(`${method}: ${message.error.message}`);
    return message.result as T;
  }

  notify(method: string, params: unknown): void {
    this.write({ jsonrpc: "2.0", method, params });
  }

  /** The first notification (already received or still to come) for which `match` holds. */
  nextNotification(match: (m: LspMessage) => boolean, what: string): Promise<LspMessage> {
    const index = this.notifications.findIndex(match);
    if (index >= 0) return Promise.resolve(this.notifications.splice(index, 1)[0]);
    return withTimeout(new Promise((resolve) => this.waiters.push({ match, resolve })), what);
  }

  /** Closes the server's stdin, as an editor that went away does; resolves with the exit code. */
  endInput(): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => this.child.once("exit", (code) => resolve(code)));
    this.child.stdin.end();
    return withTimeout(exited, "exit after stdin closed");
  }

  async close(): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => this.child.once("exit", (code) => resolve(code)));
    if (this.child.exitCode !== null) return this.child.exitCode;
    await this.request("shutdown", null);
    this.notify("exit", null);
    return withTimeout(exited, "exit");
  }
}

function withTimeout<T>(promise: Promise<T>, what: string, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([promise, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)))]).finally(() => clearTimeout(timer));
}
