// The running instance as the runtime tools see it (docs/mcp.md "Runtime control"): its pid from
// --pid-file, signals, and the config fingerprint /healthz?details=1 reports, which proves a reload.
import { readFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import type { SpoolConfig } from "../../compiler/index.js";
import type { SessionState } from "./context.js";
import { ToolError } from "./tool.js";

export function readPid(pidFile: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(pidFile, "utf8");
  } catch {
    return undefined;
  }
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

/** The pid of the running instance, or undefined when the file is missing or names no live process. */
export function runningPid(pidFile: string): number | undefined {
  const pid = readPid(pidFile);
  return pid !== undefined && isAlive(pid) ? pid : undefined;
}

/** The fingerprint the instance serves, or undefined when it does not answer. */
export async function servingFingerprint(state: SessionState, config: SpoolConfig, timeoutMs?: number): Promise<string | undefined> {
  try {
    const response = await state.apiCall(config, { method: "GET", path: "/healthz", query: { details: 1 }, timeoutMs });
    const fingerprint = (response.body as { diagnostics?: { config?: { fingerprint?: unknown } } } | null)?.diagnostics?.config?.fingerprint;
    return typeof fingerprint === "string" ? fingerprint : undefined;
  } catch (error) {
    if (error instanceof ToolError && /allowlist/.test(error.message)) throw error;
    return undefined;
  }
}

/** Polls until the instance serves `fingerprint`; false on timeout. */
export async function awaitFingerprint(state: SessionState, config: SpoolConfig, fingerprint: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await servingFingerprint(state, config)) === fingerprint) return true;
    if (Date.now() >= deadline) return false;
    await delay(100);
  }
}

/** SIGHUP to the --pid-file process, then the fingerprint of `fingerprint` awaited. */
export async function reloadInstance(state: SessionState, config: SpoolConfig, fingerprint: string, timeoutMs: number): Promise<{ ok: true; pid: number } | { ok: false; detail: string }> {
  const pid = runningPid(state.session.pidFile);
  if (pid === undefined) return { ok: false, detail: `no running instance in --pid-file ${state.session.pidFile}` };
  process.kill(pid, "SIGHUP");
  if (await awaitFingerprint(state, config, fingerprint, timeoutMs)) return { ok: true, pid };
  return { ok: false, detail: `the instance (pid ${pid}) did not serve the new config within ${timeoutMs} ms` };
}
