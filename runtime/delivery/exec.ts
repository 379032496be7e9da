// One exec delivery attempt: a process per message, payload on stdin (docs/decisions.md
// D37; docs/delivery.md "Exec"). Process hygiene is the point of this file: the
// program leads its own process group so a timeout kills it and everything it spawned, its output is
// read continuously but kept bounded, and lingering pipes never hold the worker.
import { timerDelayMs } from "../time/clock.js";
import { spawn, type ChildProcess } from "node:child_process";
import type { AttemptResult } from "./classify.js";

export interface ExecInput {
  /** Absolute path of the program (docs/decisions.md D37). */
  readonly program: string;
  readonly args?: readonly string[];
  readonly body: Buffer;
  /** The route's `env` directives. */
  readonly env?: Readonly<Record<string, string>>;
  readonly messageId: string;
  readonly route: string;
  readonly attempt: number;
  readonly contentType?: string;
  /** Stored ingress headers, exported as SPOOL_HEADER_<NAME>. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Bytes kept of each of stdout and stderr; the rest is read and discarded. Default 4 KiB. */
  readonly outputLimitBytes?: number;
  /** How long to wait for stdout/stderr to close after the program exits. Default 2 s. */
  readonly pipeGraceMs?: number;
  /**
   * 0 (default): on timeout the group gets SIGKILL at once, as docs/decisions.md D37 says — the message is
   * retried anyway, and a SIGTERM handler could only delay the worker. >0: SIGTERM first, SIGKILL after this.
   */
  readonly killGraceMs?: number;
  /** PATH given to the program; defaults to this process's PATH. */
  readonly pathEnv?: string;
  readonly signal?: AbortSignal;
}

export type ExecResult = AttemptResult & {
  readonly exitCode?: number | null;
  readonly exitSignal?: NodeJS.Signals | null;
  readonly timedOut?: boolean;
  readonly stdout: string;
  readonly stderr: string;
  readonly outputTruncated: boolean;
};

/** How long an exec attempt waits, after the program exits, for its stdout/stderr to close. */
export const EXEC_PIPE_GRACE_MS = 2_000;

/** Errors that mean the program can never start as configured: dead, not retried. */
const unstartableCodes = new Set(["ENOENT", "EACCES", "ENOEXEC", "ENOTDIR", "EISDIR", "ELOOP", "ENAMETOOLONG", "EPERM"]);

export function buildExecEnv(input: Pick<ExecInput, "env" | "messageId" | "route" | "attempt" | "contentType" | "headers" | "pathEnv">): Record<string, string> {
  const env: Record<string, string> = {};
  const path = input.pathEnv ?? process.env.PATH;
  if (path !== undefined) env.PATH = path;
  for (const [name, value] of Object.entries(input.headers)) env[headerEnvName(name)] = value;
  // The route's env may override PATH and header variables, but not the four SPOOL_* facts below.
  for (const [name, value] of Object.entries(input.env ?? {})) env[name] = value;
  env.SPOOL_MESSAGE_ID = input.messageId;
  env.SPOOL_ROUTE = input.route;
  env.SPOOL_ATTEMPT = String(input.attempt);
  env.SPOOL_CONTENT_TYPE = input.contentType ?? "";
  return env;
}

/** `X-Request-Id` → `SPOOL_HEADER_X_REQUEST_ID`; any character not valid in a shell name becomes `_`. */
export function headerEnvName(headerName: string): string {
  return `SPOOL_HEADER_${headerName.toUpperCase().replace(/[^A-Z0-9_]/g, "_")}`;
}

export function deliverExec(input: ExecInput): Promise<ExecResult> {
  const limitBytes = input.outputLimitBytes ?? 4096;
  const pipeGraceMs = input.pipeGraceMs ?? EXEC_PIPE_GRACE_MS;
  const killGraceMs = input.killGraceMs ?? 0;
  if (input.signal?.aborted) return Promise.reject(abortError(input.signal));

  return new Promise<ExecResult>((resolve, reject) => {
    const stdout = new BoundedCapture(limitBytes);
    const stderr = new BoundedCapture(limitBytes);
    const timers: NodeJS.Timeout[] = [];
    let done = false;
    let timedOut = false;

    const output = () => ({ stdout: stdout.text(), stderr: stderr.text(), outputTruncated: stdout.truncated || stderr.truncated });
    const cleanup = () => {
      done = true;
      for (const timer of timers) clearTimeout(timer);
      input.signal?.removeEventListener("abort", onAbort);
    };
    const finish = (result: AttemptResult & Partial<ExecResult>) => {
      if (done) return;
      cleanup();
      resolve({ ...result, ...output() });
    };

    let child: ChildProcess;
    try {
      child = spawn(input.program, input.args ?? [], {
        detached: true, // own process group: kill(-pid) reaches the program's children too
        env: buildExecEnv(input),
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (error) {
      finish(spawnFailure(error));
      return;
    }

    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // ESRCH: the whole group is already gone.
      }
    };

    function onAbort(): void {
      if (done) return;
      // Shutdown past its drain budget: no orphan may outlive the worker; the lease stays and expires.
      killGroup("SIGKILL");
      cleanup();
      reject(abortError(input.signal!));
    }
    input.signal?.addEventListener("abort", onAbort, { once: true });

    // Both streams are always consumed: a program that floods its output must not block on a full pipe.
    child.stdout!.on("data", (chunk: Buffer) => stdout.add(chunk));
    child.stderr!.on("data", (chunk: Buffer) => stderr.add(chunk));
    child.stdout!.on("error", () => {});
    child.stderr!.on("error", () => {});
    // EPIPE/ECONNRESET: the program exited or closed stdin without reading it all; its exit code decides.
    child.stdin!.on("error", () => {});
    child.stdin!.end(input.body);

    child.on("error", (error) => {
      if (child.pid === undefined) finish(spawnFailure(error));
    });

    timers.push(
      setTimeout(() => {
        timedOut = true;
        if (killGraceMs > 0) {
          killGroup("SIGTERM");
          timers.push(setTimeout(() => killGroup("SIGKILL"), timerDelayMs(killGraceMs)));
        } else {
          killGroup("SIGKILL");
        }
      }, timerDelayMs(input.timeoutMs)),
    );

    child.on("exit", (exitCode, exitSignal) => {
      const result = exitResult(exitCode, exitSignal, timedOut, input.timeoutMs);
      // 'close' follows once stdout and stderr are closed. A grandchild that inherited them can keep
      // them open forever, so wait only briefly, then kill what is left of the group and move on.
      child.once("close", () => finish(result));
      timers.push(
        setTimeout(() => {
          killGroup("SIGKILL");
          child.stdout!.destroy();
          child.stderr!.destroy();
          finish(result);
        }, pipeGraceMs),
      );
    });
  });
}

function exitResult(exitCode: number | null, exitSignal: NodeJS.Signals | null, timedOut: boolean, timeoutMs: number): AttemptResult & Partial<ExecResult> {
  if (timedOut) return { outcome: "retry", error: `timeout after ${timeoutMs} ms`, exitCode, exitSignal, timedOut: true };
  if (exitCode === 0) return { outcome: "acked", exitCode, exitSignal };
  const error = exitSignal ? `killed by ${exitSignal}` : `exit code ${exitCode}`;
  return { outcome: "retry", error, exitCode, exitSignal };
}

function spawnFailure(error: unknown): AttemptResult {
  const code = (error as { code?: unknown })?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === "string" && unstartableCodes.has(code)) return { outcome: "dead", deadReason: "no_retry", error: message };
  // EAGAIN, EMFILE and friends: the machine is busy, not the configuration wrong.
  return { outcome: "retry", error: message };
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException("delivery aborted", "AbortError");
}

/** Keeps the first `limitBytes` of a stream and counts the rest. */
class BoundedCapture {
  private readonly chunks: Buffer[] = [];
  private keptBytes = 0;
  truncated = false;

  constructor(private readonly limitBytes: number) {}

  add(chunk: Buffer): void {
    if (this.keptBytes >= this.limitBytes) {
      this.truncated = true;
      return;
    }
    const room = this.limitBytes - this.keptBytes;
    if (chunk.length > room) this.truncated = true;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(Buffer.from(kept));
    this.keptBytes += kept.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}
