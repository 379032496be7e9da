// Shared by the benchmarks of the built `spool run`: the 1 KB ingress load (autocannon), starting
// the binary on a Spoolfile, free ports, readiness polling and number formatting.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer as createNetServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";

/** The ingress benchmark's request body: 1 KB of JSON. */
export const BODY = JSON.stringify({ event: "bench", data: "x".repeat(1024 - 32) }).slice(0, 1024);
export const CONNECTIONS = 50;
export const SECONDS = Number(process.env.SPOOL_BENCH_SECONDS ?? 8);
export const CLI = fileURLToPath(new URL("../../cli/main.js", import.meta.url));

export interface LoadResult {
  rps: number;
  p99Ms: number;
  non2xx: number;
  /** Requests answered 2xx: for an ingress route, the messages stored. */
  ok: number;
}

/** POSTs the 1 KB body to `url` over CONNECTIONS connections for SECONDS, or `amount` times when given. */
export async function load(url: string, amount?: number): Promise<LoadResult> {
  const result = await autocannon({
    url,
    method: "POST",
    connections: CONNECTIONS,
    ...(amount === undefined ? { duration: SECONDS } : { amount }),
    body: BODY,
    headers: { "content-type": "application/json" },
  });
  return { rps: result.requests.average, p99Ms: result.latency.p99, non2xx: result.non2xx, ok: result["2xx"] };
}

/** Clock ticks per second of /proc's CPU times (Linux); null elsewhere. */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || null;
  } catch {
    return null;
  }
})();

/**
 * CPU time a process has used so far, user + system over all its threads (the SQLite checkpoint
 * worker and V8's helpers included), in ms; null without /proc. Requests per second alone cannot tell a
 * server that spends more CPU per request from one that waits more (for its fsyncs, or for a
 * client starved of the shared cores); the CPU per request can.
 */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined || TICKS_PER_SECOND === null) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name: state is the first, utime the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Runs `work` and returns its result with the CPU µs `pid` spent per unit of it (`units` of the result). */
export async function withCpuPerUnit<T>(pid: number | undefined, work: () => Promise<T>, units: (result: T) => number): Promise<T & { cpuUsPerUnit: number | null }> {
  const before = processCpuMs(pid);
  const result = await work();
  const after = processCpuMs(pid);
  const count = units(result);
  const cpuUsPerUnit = before === null || after === null || count === 0 ? null : ((after - before) * 1000) / count;
  return { ...result, cpuUsPerUnit };
}

/** ", CPU 41.2 µs/req" to append to a result line, or "" where unknown. */
export function cpuNote(cpuUsPerUnit: number | null | undefined, unit: string): string {
  return cpuUsPerUnit == null ? "" : `, CPU ${cpuUsPerUnit.toFixed(1)} µs/${unit}`;
}

/** Where `spool run` keeps its messages: SQLite in the bench directory, or a PostgreSQL schema. */
export type BenchBackend = { kind: "sqlite" } | { kind: "postgres"; dsn: string; schema: string };

/**
 * Writes `lines` as a Spoolfile in `dir` and starts the built `spool run` on it, on SQLite (a file
 * in `dir`) unless told otherwise. SPOOL_BENCH_NODE_ARGS adds Node flags to the spool process only,
 * e.g. "--cpu-prof --cpu-prof-dir=/tmp/p".
 */
export function startSpool(dir: string, lines: readonly string[], backend: BenchBackend = { kind: "sqlite" }): ChildProcess {
  const config = join(dir, `Spoolfile.${backend.kind}`);
  writeFileSync(config, [...lines, ""].join("\n"));
  const nodeArgs = (process.env.SPOOL_BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const store = backend.kind === "sqlite" ? ["--db", join(dir, "spool.db")] : ["--postgres-dsn", backend.dsn];
  const env = backend.kind === "postgres" ? { ...process.env, SPOOL_POSTGRES_SCHEMA: backend.schema } : process.env;
  return spawn(process.execPath, [...nodeArgs, CLI, "run", "--config", config, ...store], { stdio: "inherit", env });
}

/** SIGTERM to every child, then wait for each to end. */
export async function stopChildren(children: readonly ChildProcess[]): Promise<void> {
  for (const child of children) child.kill("SIGTERM");
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(null) : c.once("exit", r)))));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export async function waitFor(url: string, method: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      const response = await fetch(url, { method });
      await response.text();
      if (response.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} did not come up`);
}

export function fmt(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}
