// CLI start-up benchmark (issue 33, docs/decisions.md D140): wall time and peak RSS of what editors and
// pre-commit run once per save or commit, each beside `node -e 0` measured in the same run.
// Targets: `spool config fmt` on the example Spoolfile under 150 ms wall and 60 MB peak; `spool lsp`
// ready to answer `initialize` under 300 ms. The machine is shared, so figures are rough: the median
// of several runs, with the bare `node -e 0` start beside them as the reference.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const spoolBin = join(repo, "dist", "cli", "main.js");
const RUNS = 9;

// Peak RSS and CPU time of a child: a preloaded module writes process.resourceUsage() on exit. The
// same preload runs for `node -e 0`, so both sides carry it. CPU time (user + system) is printed
// beside wall time: on a busy machine it moves much less than wall time does.
const work = mkdtempSync(join(tmpdir(), "spool-bench-cli-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));
const preload = join(work, "peak-rss.mjs");
writeFileSync(preload, `import { writeFileSync } from "node:fs";\nprocess.on("exit", () => { const u = process.resourceUsage(); writeFileSync(process.env.SPOOL_BENCH_RSS_FILE, JSON.stringify([u.maxRSS, u.userCPUTime + u.systemCPUTime])); });\n`);
const rssFile = join(work, "rss.txt");
const childEnv = { ...process.env, SPOOL_BENCH_RSS_FILE: rssFile };
const nodeArgs = ["--import", pathToFileURL(preload).href];

interface Sample {
  wallMs: number;
  cpuMs: number;
  peakMb: number;
}

/** The child's peak RSS (MB) and CPU time (ms), as its preload wrote them on exit. */
function usage(): { peakMb: number; cpuMs: number } {
  const [maxRssKb, cpuMicros] = JSON.parse(readFileSync(rssFile, "utf8")) as [number, number];
  return { peakMb: maxRssKb / 1024, cpuMs: cpuMicros / 1000 };
}

function runOnce(args: readonly string[]): Sample {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [...nodeArgs, ...args], { cwd: repo, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited ${result.status}: ${result.stderr}`);
  return { wallMs, ...usage() };
}

/** Starts `spool lsp`, sends `initialize` and times the answer; then shuts it down and reads its peak RSS. */
function lspOnce(): Promise<Sample> {
  return new Promise((resolvePromise, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [...nodeArgs, spoolBin, "lsp", "--stdio"], { cwd: repo, env: childEnv, stdio: ["pipe", "pipe", "inherit"] });
    let wallMs = 0;
    let buffer = "";
    const send = (message: object) => {
      const body = JSON.stringify({ jsonrpc: "2.0", ...message });
      child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      buffer += chunk;
      if (wallMs === 0 && buffer.includes('"id":1')) {
        wallMs = Number(process.hrtime.bigint() - started) / 1e6;
        send({ method: "initialized", params: {} });
        send({ id: 2, method: "shutdown" });
      }
      if (buffer.includes('"id":2')) send({ method: "exit" });
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (wallMs === 0) reject(new Error(`spool lsp exited ${code} before answering initialize`));
      else resolvePromise({ wallMs, ...usage() });
    });
    send({ id: 1, method: "initialize", params: { processId: process.pid, rootUri: null, capabilities: {} } });
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function measure(run: () => Sample | Promise<Sample>): Promise<Sample> {
  await run(); // warm the file cache
  const samples: Sample[] = [];
  for (let i = 0; i < RUNS; i++) samples.push(await run());
  return { wallMs: median(samples.map((s) => s.wallMs)), cpuMs: median(samples.map((s) => s.cpuMs)), peakMb: median(samples.map((s) => s.peakMb)) };
}

function line(name: string, sample: Sample, reference: Sample, target?: { wallMs: number; peakMb?: number }): string {
  const over = (value: number, base: number) => `${value.toFixed(0).padStart(4)} ms (${value >= base ? "+" : ""}${(value - base).toFixed(0)})`;
  const figures = `${name.padEnd(32)} wall ${over(sample.wallMs, reference.wallMs)}   cpu ${over(sample.cpuMs, reference.cpuMs)}   peak ${sample.peakMb.toFixed(1)} MB`;
  if (!target) return figures;
  const met = sample.wallMs < target.wallMs && (target.peakMb === undefined || sample.peakMb < target.peakMb);
  const wanted = `target < ${target.wallMs} ms${target.peakMb === undefined ? "" : `, < ${target.peakMb} MB`}`;
  return `${figures}   ${wanted}   ${met ? "OK" : "MISSED"}`;
}

const example = join(repo, "Spoolfile");
const node = await measure(() => runOnce(["-e", "0"]));
const version = await measure(() => runOnce([spoolBin, "version"]));
const fmt = await measure(() => runOnce([spoolBin, "config", "fmt", example]));
const lsp = await measure(lspOnce);
console.log(`median of ${RUNS} runs each; (±) is the difference to node -e 0; a shared machine: rough figures`);
console.log(line("node -e 0 (reference)", node, node));
console.log(line("spool version", version, node));
console.log(line("spool config fmt Spoolfile", fmt, node, { wallMs: 150, peakMb: 60 }));
console.log(line("spool lsp, initialize answered", lsp, node, { wallMs: 300 }));
