// `keep exec` (route B, keep/README.md): resolve the whole set, then run CMD with the inherited
// environment plus the secrets, inheriting stdio. Node has no execve, so the wrapper stays the
// parent: it forwards SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2, waits, and exits with
// the child's code, or 128+N when a signal N killed the child. Keep's own failures exit 125 and
// start no child; 126 is a program that exists but cannot run, 127 one that is not found.
import { spawn } from "node:child_process";
import { accessSync, constants as fsConstants, statSync } from "node:fs";
import { constants as osConstants } from "node:os";
import { join } from "node:path";
import { byteOrder } from "../common/paths.js";
import { resolveSet } from "../consumer/deliver.js";
import { refuseNulValues } from "../consumer/fetch-set.js";
import { InputError, parseConsumerFlags } from "../consumer/inputs.js";

const FORWARDED = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"] as const;
const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

type Resolved = { path: string } | { exit: 126 | 127; why: string };

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** CMD on PATH (unless it contains "/"), the way execvp looks it up; no shell is involved. */
export function resolveProgram(cmd: string, pathVar: string | undefined): Resolved {
  if (cmd.includes("/")) return exists(cmd) ? { path: cmd } : { exit: 127, why: "not found" };
  let denied = false;
  for (const dir of (pathVar ?? DEFAULT_PATH).split(":")) {
    const candidate = join(dir === "" ? "." : dir, cmd);
    try {
      if (!statSync(candidate).isFile()) continue;
    } catch {
      continue;
    }
    try {
      accessSync(candidate, fsConstants.X_OK);
      return { path: candidate };
    } catch {
      denied = true;
    }
  }
  return denied ? { exit: 126, why: "permission denied" } : { exit: 127, why: "not found on PATH" };
}

function say(text: string): Promise<void> {
  return new Promise((resolve) => process.stderr.write(`keep exec: ${text}\n`, () => resolve()));
}

/** Runs the wrapper; resolves with the exit status (the caller exits with it). */
export async function runExec(args: readonly string[]): Promise<number> {
  const dash = args.indexOf("--");
  const before = dash < 0 ? [...args] : args.slice(0, dash);
  const report = before.includes("--report");
  let env: NodeJS.ProcessEnv;
  let cmd: string;
  let cmdArgs: string[];
  let names: string[];
  try {
    if (dash < 0) throw new InputError("usage: keep exec --url U --ca CA.pem --token-file T --path P … [--report] -- CMD [ARG …]");
    cmd = args[dash + 1];
    if (cmd === undefined || cmd === "") throw new InputError("no command after --");
    cmdArgs = args.slice(dash + 2);
    const { values } = parseConsumerFlags(before.filter((a) => a !== "--report"));
    const secrets = await resolveSet(values);
    refuseNulValues(secrets);
    env = { ...process.env };
    for (const s of secrets) env[s.name] = s.value;
    names = secrets.map((s) => s.name).sort(byteOrder);
  } catch (error) {
    await say((error as Error).message);
    return 125;
  }
  const resolved = resolveProgram(cmd, env.PATH);
  if ("exit" in resolved) {
    await say(`${cmd}: ${resolved.why}`);
    return resolved.exit;
  }
  if (report) await say(`delivering ${names.join(" ")}; running ${resolved.path}`);
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(resolved.path, cmdArgs, { stdio: "inherit", env, argv0: cmd });
  } catch (error) {
    // Some start failures are thrown, not emitted: E2BIG (a value over the kernel's 128 KiB limit
    // for one environment string) among them. The message names the code, never the environment.
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    await say(`${cmd}: cannot run (${code === "E2BIG" ? "E2BIG: a delivered value or the environment is too large for the system to pass on" : code})`);
    return 126;
  }
  return new Promise<number>((resolve) => {
    const forward = (signal: NodeJS.Signals) => () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    const handlers = FORWARDED.map((signal) => [signal, forward(signal)] as const);
    for (const [signal, handler] of handlers) process.on(signal, handler);
    let settled = false;
    const finish = (status: number): void => {
      if (settled) return;
      settled = true;
      resolve(status);
    };
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return; // an error after the start (a failed kill) is not the child's end
      const code = error.code ?? "error";
      // ENOENT for an existing file means its #! interpreter is missing: it cannot run (126).
      const status = code === "ENOENT" && !exists(resolved.path) ? 127 : 126;
      void say(`${cmd}: cannot run (${code === "ENOENT" && status === 126 ? "its interpreter is missing" : code})`).then(() => finish(status));
    });
    child.once("exit", (code, signal) => {
      for (const [sig, handler] of handlers) process.off(sig, handler);
      finish(signal ? 128 + (osConstants.signals[signal] ?? 0) : (code ?? 125));
    });
  });
}
