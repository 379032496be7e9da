// Whether a process is still running, for tests that check no program outlives its delivery.
import { readFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";

/** A process that was killed may linger as a zombie until reaped; that is dead too. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Polls for up to `timeoutMs` until `pid` is gone; true when it is. */
export async function waitDead(pid: number, timeoutMs = 2_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid) && Date.now() < deadline) await delay(10);
  return !isAlive(pid);
}
