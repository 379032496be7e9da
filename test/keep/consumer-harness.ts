// Shared parts of the consumer tests (keep fetch, keep exec, the action): the runner's env-file
// grammar, a fake runner (GITHUB_ENV with earlier content, RUNNER_TEMP, RUNNER_ARCH), async runs
// of real processes, and the check every run gets: no value in stdout or stderr except mask lines.
import { spawn, type SpawnOptions } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as assert from "uvu/assert";
import { keepBin } from "./keep-helpers.js";

/**
 * The runner's env-file grammar on Linux: lines end at LF only (a CR stays in the line); empty
 * lines are skipped; `NAME=value` when `=` comes before any `<<`; otherwise `NAME<<D` and the
 * following lines up to one equal to D, joined with their LFs (the last LF is not part of the
 * value). Anything else, or a missing delimiter, is an error: the step fails.
 */
export function parseEnvFile(text: string): Map<string, string> {
  const env = new Map<string, string>();
  let index = 0;
  const readLine = (): { line: string; nl: boolean } | undefined => {
    if (index >= text.length) return undefined;
    const lf = text.indexOf("\n", index);
    const start = index;
    if (lf < 0) {
      index = text.length;
      return { line: text.slice(start), nl: false };
    }
    index = lf + 1;
    return { line: text.slice(start, lf), nl: true };
  };
  for (let r = readLine(); r; r = readLine()) {
    const line = r.line;
    if (line === "") continue;
    const eq = line.indexOf("=");
    const hd = line.indexOf("<<");
    if (eq >= 0 && (hd < 0 || eq < hd)) {
      const name = line.slice(0, eq);
      if (name === "") throw new Error(`invalid line ${JSON.stringify(line)}`);
      env.set(name, line.slice(eq + 1));
    } else if (hd >= 0) {
      const name = line.slice(0, hd);
      const delimiter = line.slice(hd + 2);
      if (name === "" || delimiter === "") throw new Error(`invalid heredoc ${JSON.stringify(line)}`);
      const start = index;
      let end = index;
      for (let t = readLine(); ; t = readLine()) {
        if (!t) throw new Error(`delimiter ${delimiter} not found`);
        if (t.line === delimiter) break;
        if (!t.nl) throw new Error("EOF marker missing new line");
        end = index - 1;
      }
      env.set(name, end > start ? text.slice(start, end) : "");
    } else {
      throw new Error(`invalid line ${JSON.stringify(line)}`);
    }
  }
  return env;
}

export interface FakeRunner {
  githubEnv: string;
  runnerTemp: string;
  earlier: string;
  env: NodeJS.ProcessEnv;
}

/** A temp GITHUB_ENV with earlier content (no final LF: keep must add one), RUNNER_TEMP, RUNNER_ARCH. */
export function fakeRunner(dir: string, name: string, arch = "X64"): FakeRunner {
  const root = join(dir, `runner-${name}`);
  mkdirSync(join(root, "temp"), { recursive: true });
  const githubEnv = join(root, "github_env");
  const earlier = "EARLIER=kept\nMULTI<<ghadelimiter_1\nm1\nm2\nghadelimiter_1\nLAST=no-final-lf";
  writeFileSync(githubEnv, earlier);
  return { githubEnv, runnerTemp: join(root, "temp"), earlier, env: { ...process.env, GITHUB_ENV: githubEnv, RUNNER_TEMP: join(root, "temp"), RUNNER_ARCH: arch } };
}

export const EARLIER_MAP: [string, string][] = [
  ["EARLIER", "kept"],
  ["MULTI", "m1\nm2"],
  ["LAST", "no-final-lf"],
];

export interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a program to its end; `started` sees the child first (to signal it, watch /proc, …). */
export function run(file: string, args: string[], opts: SpawnOptions & { input?: string; started?: (child: ReturnType<typeof spawn>) => void } = {}): Promise<Run> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...opts, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (c) => (stdout += c));
    child.stderr!.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.stdin!.end(opts.input ?? "");
    opts.started?.(child);
    child.on("close", (status, signal) => resolve({ status, signal, stdout, stderr, ms: Date.now() - t0 }));
  });
}

export function runKeep(args: string[], opts: SpawnOptions & { input?: string; started?: (child: ReturnType<typeof spawn>) => void } = {}): Promise<Run> {
  return run(process.execPath, [keepBin, ...args], opts);
}

/** Every non-empty line of every value, escaped as the mask lines carry them. */
export function expectedMasks(values: Iterable<string>): string[] {
  const out: string[] = [];
  for (const v of values) for (const l of v.split(/\r\n|\r|\n/)) if (l !== "") out.push(`::add-mask::${l.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A")}`);
  return out;
}

/**
 * No value in stdout or stderr, except as mask lines: stdout may hold only `::add-mask::` lines,
 * and neither stream may hold any value, nor any line of one (lines of 6+ characters), nor the token.
 * `childOutput`: stdout also carries a wrapped child's own lines (which hold no value here).
 */
export function assertNoLeak(r: Pick<Run, "stdout" | "stderr">, secrets: Iterable<string>, opts: { stdoutIsProduct?: boolean; childOutput?: boolean } = {}): void {
  const stdout = opts.stdoutIsProduct ? "" : r.stdout;
  if (!opts.childOutput) for (const line of stdout.split("\n").slice(0, -1)) assert.ok(line.startsWith("::add-mask::"), `stdout holds a line that is not a mask line: ${JSON.stringify(line.slice(0, 40))}`);
  assert.ok(stdout === "" || stdout.endsWith("\n"), "stdout ends with a whole mask line");
  const rest = stdout.split("\n").filter((l) => !l.startsWith("::add-mask::")).join("\n") + "\n" + r.stderr;
  for (const secret of secrets) {
    const pieces = [secret, ...secret.split(/\r\n|\r|\n/).filter((l) => l.trim().length >= 6)];
    for (const piece of pieces) if (piece.trim().length >= 6) assert.not.ok(rest.includes(piece), `a value leaked: ${JSON.stringify(piece.slice(0, 3))}…`);
  }
}
