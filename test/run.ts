// Test entry: runs every compiled `*.test.js` file in its own Node process (servers, stores and
// signal handlers stay isolated), two at a time, and ends with the line CI reads:
// "N passed, N failed[, N skipped]".
//
// A file reports skipped suites by printing `spool-test-skipped: <count> <reason>` (see
// helpers/skip.ts); uvu's own counts come from its closing "Total/Passed/Skipped" block.
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const testRoot = dirname(fileURLToPath(import.meta.url));
const fileTimeoutMs = Number(process.env.SPOOL_TEST_FILE_TIMEOUT_MS ?? 300_000);
const parallelFiles = Number(process.env.SPOOL_TEST_PARALLEL ?? 2);
const filter = process.argv[2] ?? process.env.SPOOL_TEST_FILTER ?? "";

interface FileResult {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  output: string;
}

function listTestFiles(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (name === "bench" || name === "node_modules") continue;
    if (statSync(path).isDirectory()) found.push(...listTestFiles(path));
    else if (name.endsWith(".test.js")) found.push(path);
  }
  return found;
}

function runFile(file: string): Promise<FileResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], {
      env: { ...process.env, FORCE_COLOR: "0", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n[run] ${file} exceeded ${fileTimeoutMs} ms and was killed\n`;
      child.kill("SIGKILL");
    }, fileTimeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const total = lastNumber(output, /Total:\s+(\d+)/g);
      const passed = lastNumber(output, /Passed:\s+(\d+)/g);
      const uvuSkipped = lastNumber(output, /Skipped:\s+(\d+)/g) ?? 0;
      let markerSkipped = 0;
      for (const m of output.matchAll(/^spool-test-skipped: (\d+)/gm)) markerSkipped += Number(m[1]);
      const rel = relative(testRoot, file);
      if (total === undefined || passed === undefined) {
        // No summary: the file crashed before or while running; count it as one failure.
        resolve({ file: rel, passed: 0, failed: 1, skipped: markerSkipped, output });
        return;
      }
      let failed = total - passed;
      if (failed === 0 && (code !== 0 || signal)) failed = 1;
      resolve({ file: rel, passed, failed, skipped: uvuSkipped + markerSkipped, output });
    });
  });
}

function lastNumber(text: string, pattern: RegExp): number | undefined {
  let value: number | undefined;
  for (const m of text.matchAll(pattern)) value = Number(m[1]);
  return value;
}

async function main(): Promise<void> {
  const files = listTestFiles(testRoot).filter((f) => relative(testRoot, f).includes(filter));
  const queue = [...files];
  const results: FileResult[] = [];
  const started = Date.now();
  async function worker(): Promise<void> {
    for (let file = queue.shift(); file; file = queue.shift()) {
      const fileStarted = Date.now();
      const result = await runFile(file);
      results.push(result);
      const seconds = ((Date.now() - fileStarted) / 1000).toFixed(1);
      const status = result.failed ? "FAIL" : "ok";
      process.stdout.write(`── ${status} ${result.file} (${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped, ${seconds}s)\n`);
      if (result.failed || process.env.SPOOL_TEST_VERBOSE) process.stdout.write(indent(result.output));
      else for (const m of result.output.matchAll(/^spool-test-skipped: .*$/gm)) process.stdout.write(`   ${m[0]}\n`);
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, parallelFiles) }, worker));
  const passed = sum(results, "passed");
  const failed = sum(results, "failed");
  const skipped = sum(results, "skipped");
  process.stdout.write(`\n${files.length} test files in ${((Date.now() - started) / 1000).toFixed(1)}s\n`);
  if (files.length === 0) process.stdout.write("no test files matched\n");
  process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}\n`);
  process.exitCode = failed > 0 || files.length === 0 ? 1 : 0;
}

function sum(results: FileResult[], key: "passed" | "failed" | "skipped"): number {
  return results.reduce((total, r) => total + r[key], 0);
}

function indent(text: string): string {
  return text.split("\n").map((line) => `   ${line}`).join("\n") + "\n";
}

await main();
