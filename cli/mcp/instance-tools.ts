// The runtime tools (docs/mcp.md "Runtime control"), behind --enable-runtime-control: the instance
// named by --pid-file, its runtime log, and start, stop and reload.
import { spawn } from "node:child_process";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { durationArg } from "./admin-tools.js";
import type { CallContext } from "./context.js";
import { awaitFingerprint, isAlive, reloadInstance, runningPid, servingFingerprint } from "./runtime-control.js";
import { AUDIT, bool, int, object, str } from "./schema.js";
import { ToolError, type Args, type ToolDef } from "./tool.js";

const PID_FILE = { pid_file: str("The pid file; must equal --pid-file") };
const TIMEOUT = { timeout: str("How long to wait, e.g. 10s") };

function pidFileOf(ctx: CallContext, args: Args): string {
  const given = args.pid_file as string | undefined;
  if (given !== undefined && resolve(given) !== resolve(ctx.session.pidFile)) {
    throw new ToolError(`argument "pid_file" must be the --pid-file ${ctx.session.pidFile}, got ${JSON.stringify(given)}`);
  }
  return ctx.session.pidFile;
}

const control = (operation: string, outcome: string) => ({ kind: "runtime_control", operation, outcome });

const status: ToolDef = {
  name: "instance_status",
  description: "Whether the instance of --pid-file runs, and whether its Admin API answers",
  role: "operate",
  gate: "runtime_control",
  mutating: false,
  input: object({ ...PID_FILE, ...TIMEOUT }),
  check: (args) => void durationArg(args, "timeout", 2000),
  async run(args, ctx) {
    const pidFile = pidFileOf(ctx, args);
    const pid = runningPid(pidFile);
    if (pid === undefined) return { result: { running: false, summary: `not running (no live process in ${pidFile})` } };
    let adminOk = false;
    try {
      adminOk = (await servingFingerprint(ctx.state, ctx.config().config, durationArg(args, "timeout", 2000))) !== undefined;
    } catch {
      adminOk = false;
    }
    return { result: { running: true, pid, admin_ok: adminOk, summary: `running as pid ${pid}; Admin API ${adminOk ? "answers" : "does not answer"}` } };
  },
};

const MAX_TAIL_BYTES = 1024 * 1024;

const logsTail: ToolDef = {
  name: "instance_logs_tail",
  description: "The last lines of the instance's runtime log file (observability.runtime_log output file)",
  role: "operate",
  gate: "runtime_control",
  mutating: false,
  input: object({ ...PID_FILE, max_lines: int("Most lines (default 200)", 1, 1000), max_bytes: int("Most bytes read from the end (default 65536)", 1, MAX_TAIL_BYTES) }),
  async run(args, ctx) {
    pidFileOf(ctx, args);
    const output = ctx.config().config.observability.runtimeLog.output;
    if (output.kind !== "file") throw new ToolError(`the runtime log goes to ${output.kind}, not a file: set observability { runtime_log { output file; path … } } to tail it`);
    const path = resolve(output.path);
    const maxLines = (args.max_lines as number | undefined) ?? 200;
    const maxBytes = (args.max_bytes as number | undefined) ?? 64 * 1024;
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      throw new ToolError(`the runtime log ${path} cannot be read`);
    }
    const start = Math.max(0, size - maxBytes);
    const buffer = Buffer.alloc(size - start);
    const fd = openSync(path, "r");
    try {
      readSync(fd, buffer, 0, buffer.length, start);
    } finally {
      closeSync(fd);
    }
    let lines = buffer.toString("utf8").split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    let truncated = start > 0;
    if (start > 0) lines.shift(); // a partial first line
    if (lines.length > maxLines) {
      lines = lines.slice(-maxLines);
      truncated = true;
    }
    return { result: { path, lines, truncated } };
  },
};

const start: ToolDef = {
  name: "instance_start",
  description: "Start `spool run --config --db --pid-file --watch` in the background and wait until it is healthy",
  role: "admin",
  gate: "runtime_control",
  mutating: true,
  input: object({ ...PID_FILE, ...TIMEOUT, ...AUDIT }, ["reason"]),
  check: (args) => void durationArg(args, "timeout", 10_000),
  async run(args, ctx) {
    const pidFile = pidFileOf(ctx, args);
    const running = runningPid(pidFile);
    if (running !== undefined) return { result: { started: false, already_running: true, pid: running, audit: ctx.auditResult() }, metadata: control("start", "already_running") };
    const loaded = ctx.config();
    const timeoutMs = durationArg(args, "timeout", 10_000);
    const [program, ...prefix] = ctx.session.spoolCommand;
    const child = spawn(program, [...prefix, "run", "--config", ctx.session.configPath, "--db", ctx.session.dbPath, "--pid-file", pidFile, "--watch"], {
      detached: true,
      stdio: "ignore",
      env: process.env,
    });
    child.unref();
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const pid = runningPid(pidFile);
      if (pid !== undefined && (await awaitFingerprint(ctx.state, loaded.config, loaded.fingerprint, 0))) {
        return { result: { started: true, already_running: false, pid, audit: ctx.auditResult() }, metadata: control("start", "started") };
      }
      if (child.exitCode !== null) break;
      await delay(100);
    }
    throw new ToolError(
      child.exitCode !== null ? `spool run exited with status ${child.exitCode} before it was healthy (see its runtime log)` : `spool run was not healthy within ${timeoutMs} ms`,
      control("start", "failed"),
    );
  },
};

const stop: ToolDef = {
  name: "instance_stop",
  description: "Stop the instance (SIGTERM; with force, SIGKILL after the timeout)",
  role: "admin",
  gate: "runtime_control",
  mutating: true,
  input: object({ ...PID_FILE, ...TIMEOUT, force: bool("SIGKILL when SIGTERM did not stop it in time"), ...AUDIT }, ["reason"]),
  check: (args) => void durationArg(args, "timeout", 10_000),
  async run(args, ctx) {
    const pidFile = pidFileOf(ctx, args);
    const pid = runningPid(pidFile);
    if (pid === undefined) return { result: { stopped: false, already_stopped: true, audit: ctx.auditResult() }, metadata: control("stop", "already_stopped") };
    const timeoutMs = durationArg(args, "timeout", 10_000);
    process.kill(pid, "SIGTERM");
    const deadline = Date.now() + timeoutMs;
    while (isAlive(pid) && Date.now() < deadline) await delay(50);
    if (isAlive(pid)) {
      if (args.force !== true) throw new ToolError(`pid ${pid} did not stop within ${timeoutMs} ms (force: true sends SIGKILL)`, control("stop", "timeout"));
      process.kill(pid, "SIGKILL");
      while (isAlive(pid)) await delay(20);
      return { result: { stopped: true, already_stopped: false, forced: true, pid, audit: ctx.auditResult() }, metadata: control("stop", "forced") };
    }
    return { result: { stopped: true, already_stopped: false, forced: false, pid, audit: ctx.auditResult() }, metadata: control("stop", "stopped") };
  },
};

const reload: ToolDef = {
  name: "instance_reload",
  description: "Reload the instance's config (SIGHUP), proved by the fingerprint it then serves",
  role: "admin",
  gate: "runtime_control",
  mutating: true,
  input: object({ ...PID_FILE, ...TIMEOUT, ...AUDIT }, ["reason"]),
  check: (args) => void durationArg(args, "timeout", 5000),
  async run(args, ctx) {
    pidFileOf(ctx, args);
    const loaded = ctx.config();
    // The fingerprint of the file's bytes, as `spool run` computes it when it loads the file: the
    // decoded text can differ from them (a UTF-8 byte order mark is not part of it).
    const outcome = await reloadInstance(ctx.state, loaded.config, loaded.fingerprint, durationArg(args, "timeout", 5000));
    if (!outcome.ok) throw new ToolError(outcome.detail, control("reload", "failed"));
    return { result: { reloaded: true, pid: outcome.pid, audit: ctx.auditResult() }, metadata: control("reload", "reloaded") };
  },
};

export const INSTANCE_TOOLS: ToolDef[] = [status, logsTail, start, stop, reload];
