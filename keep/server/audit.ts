// The audit trail: one JSON line per secret served, written and fsynced before the response leaves.
// Requests that arrive while a write+fsync is in flight wait together and share the next one
// (group commit). Each line carries `prev`, the SHA-256 (hex) of the previous line's bytes without
// its newline (64 zeros for the first line), so an edited, deleted or inserted line breaks the chain.
import { createHash } from "node:crypto";
import { closeSync, fstatSync, ftruncateSync, openSync, readSync, statSync, writeSync } from "node:fs";
import { fsync, write } from "node:fs";
import { promisify } from "node:util";

const writeAsync = (fd: number, buffer: Buffer): Promise<number> =>
  new Promise((resolve, reject) => write(fd, buffer, (error, n) => (error ? reject(error) : resolve(n))));
const fsyncAsync = promisify(fsync);

export const GENESIS = "0".repeat(64);

export interface AuditEvent {
  identity: string;
  op: "read" | "export";
  path: string;
  request_id?: string;
}

export function lineHash(line: string): string {
  return createHash("sha256").update(line, "utf8").digest("hex");
}

interface Pending {
  events: AuditEvent[];
  resolve(): void;
  reject(error: Error): void;
}

/** The hash of the last complete line of the file open at `fd` (GENESIS when empty). */
function tailHash(fd: number): string {
  const size = fstatSync(fd).size;
  if (size === 0) return GENESIS;
  let chunk = Buffer.alloc(0);
  for (let end = size; end > 0 && chunk.subarray(0, chunk.length - 1).indexOf(10) < 0; ) {
    const start = Math.max(0, end - 65536);
    const buf = Buffer.alloc(end - start);
    readSync(fd, buf, 0, buf.length, start);
    chunk = Buffer.concat([buf, chunk]);
    end = start;
  }
  const text = chunk.toString("utf8").replace(/\n$/, "");
  return lineHash(text.slice(text.lastIndexOf("\n") + 1));
}

export class AuditLog {
  private fd: number;
  private prev: string;
  private size: number;
  private queue: Pending[] = [];
  private flushing = false;
  /** How many write+fsync rounds ran (group commit makes this far smaller than the lines). */
  fsyncs = 0;

  /** Opens FILE for appending (throws when it cannot); nothing is written. */
  constructor(readonly file: string) {
    this.fd = openSync(file, "a+", 0o600);
    this.size = 0;
    this.prev = GENESIS;
    this.adoptOpenFile();
  }

  /**
   * Continues the chain of the file open at `fd`. A last line a crash cut short is ended first, so
   * the next record is a line of its own (verify then names the torn line, and only it).
   */
  private adoptOpenFile(): void {
    const stat = fstatSync(this.fd);
    if (!stat.isFile()) return;
    this.size = stat.size;
    if (stat.size > 0) {
      const last = Buffer.alloc(1);
      readSync(this.fd, last, 0, 1, stat.size - 1);
      if (last[0] !== 10) this.size += writeSync(this.fd, "\n");
    }
    this.prev = tailHash(this.fd);
  }

  /**
   * Whether the path still names the file being written. A log moved or deleted (logrotate without
   * copytruncate, an operator's rm) would otherwise take every later line with it, out of sight:
   * the path is opened again, and a new file starts a chain of its own.
   */
  private followPath(): void {
    const open = fstatSync(this.fd);
    if (!open.isFile()) return;
    let named: ReturnType<typeof statSync> | undefined;
    try {
      named = statSync(this.file);
    } catch {
      named = undefined;
    }
    if (named && named.ino === open.ino && named.dev === open.dev) return;
    const fd = openSync(this.file, "a+", 0o600);
    closeSync(this.fd);
    this.fd = fd;
    this.size = 0;
    this.prev = GENESIS;
    this.adoptOpenFile();
  }

  /** Resolves once every event is on disk; rejects when the write or fsync fails. */
  append(events: AuditEvent[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ events, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  close(): void {
    closeSync(this.fd);
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        this.followPath();
      } catch (error) {
        for (const p of batch) p.reject(error as Error);
        continue;
      }
      const startPrev = this.prev;
      const ts = new Date().toISOString();
      let prev = startPrev;
      const lines: string[] = [];
      for (const p of batch) {
        for (const e of p.events) {
          const line = JSON.stringify({ ts, identity: e.identity, op: e.op, path: e.path, ...(e.request_id ? { request_id: e.request_id } : {}), prev });
          prev = lineHash(line);
          lines.push(line);
        }
      }
      const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(""), "utf8");
      try {
        let written = 0;
        while (written < bytes.length) written += await writeAsync(this.fd, bytes.subarray(written));
        await fsyncAsync(this.fd);
        this.fsyncs++;
        this.prev = prev;
        this.size += bytes.length;
        for (const p of batch) p.resolve();
      } catch (error) {
        this.undoPartial();
        for (const p of batch) p.reject(error as Error);
      }
    }
    this.flushing = false;
  }

  /** After a failed write, cut the file back to its last complete batch (best effort). */
  private undoPartial(): void {
    try {
      if (fstatSync(this.fd).isFile()) ftruncateSync(this.fd, this.size);
    } catch {
      // A device such as /dev/full cannot be truncated; nothing was appended to it either.
    }
  }
}
