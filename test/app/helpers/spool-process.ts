// Runs the BUILT `spool run` as a subprocess for end-to-end tests: free ports chosen beforehand,
// readiness by polling GET /healthz, output captured for assertions on log lines.
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { spoolBin } from "../../helpers/repo.js";
import { eventually } from "./http.js";

/** The built CLI (dist/cli/main.js). */
export const CLI = spoolBin;

/** A port that was free a moment ago: bind 0, read it, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface SpoolProcess {
  readonly child: ChildProcess;
  /** stdout + stderr so far. */
  output(): string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Waits until a line of output contains `text`. */
  waitForOutput(text: string, timeoutMs?: number): Promise<void>;
  kill(signal?: NodeJS.Signals): void;
}

export function spawnSpool(args: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}): SpoolProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return {
    child,
    output: () => output,
    exited,
    waitForOutput: async (text, timeoutMs = 10_000) => {
      await eventually(() => (output.includes(text) ? true : undefined), timeoutMs, `output containing ${JSON.stringify(text)}`);
    },
    kill: (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}

/** Polls GET {adminBase}/healthz until it answers 200, failing at once if the process exits. */
export async function waitHealthy(proc: SpoolProcess, adminBase: string, timeoutMs = 15_000): Promise<void> {
  let stopPolling = false;
  const healthy = eventually(
    async () => {
      if (stopPolling) return false;
      const response = await fetch(`${adminBase}/healthz`);
      await response.text();
      return response.status === 200 ? true : undefined;
    },
    timeoutMs,
    "healthz",
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n--- spool output ---\n${proc.output()}`);
  });
  // `eventually` retries a probe that throws, so an exit is raced rather than thrown from the probe.
  const exited = proc.exited.then(({ code, signal }) => {
    throw new Error(`spool exited (${signal ?? code}) before becoming healthy:\n${proc.output()}`);
  });
  try {
    await Promise.race([healthy, exited]);
  } finally {
    stopPolling = true;
    exited.catch(() => {});
    healthy.catch(() => {});
  }
}

/** Stops the process with SIGTERM (SIGKILL after 16 s, past its own 15 s bound) and waits for it to end. */
export async function stopSpool(proc: SpoolProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  proc.kill("SIGTERM");
  const timer = setTimeout(() => proc.kill("SIGKILL"), 16_000);
  const result = await proc.exited;
  clearTimeout(timer);
  return result;
}
