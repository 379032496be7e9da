// The README's run command, run exactly as documented (argv as a supervisor's ExecStart would split
// it, in a directory laid out like the repository: the example Spoolfile and the built dist/), must
// be the process that receives signals: SIGTERM or SIGINT to it stops the server, frees every port
// the example Spoolfile listens on, and leaves no process behind. `npx spool run` failed this: npm's
// exec wrapper took the signal and the server was re-parented to PID 1, holding its ports
// (docs/operations.md, "Running under a supervisor").
import { spawn } from "node:child_process";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { eventually } from "../app/helpers/http.js";
import { freePort } from "../app/helpers/spool-process.js";
import { isAlive } from "../helpers/processes.js";
import { repoPath } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";

const test = suite("the README's run command under a supervisor");

/** The command after `npm ci && ` in README.md's run block (the line that is not `npm test`). */
function documentedRunCommand(): string[] {
  const readme = readFileSync(repoPath("README.md"), "utf8");
  const lines = [...readme.matchAll(/^npm ci && (.+)$/gm)].map((m) => m[1].trim()).filter((c) => c !== "npm test");
  assert.is(lines.length, 1, `README.md should have exactly one run command after "npm ci && ", found ${JSON.stringify(lines)}`);
  return lines[0].split(/\s+/);
}

/** The example Spoolfile with its listen ports moved to free ones, so parallel test files cannot clash. */
async function exampleWithFreePorts(): Promise<{ text: string; ports: number[] }> {
  let text = readFileSync(repoPath("Spoolfile"), "utf8");
  const ports: number[] = [];
  for (const m of [...text.matchAll(/listen 127\.0\.0\.1:(\d+)/g)]) {
    const port = await freePort();
    ports.push(port);
    text = text.replace(m[0], `listen 127.0.0.1:${port}`);
  }
  assert.ok(ports.length >= 3, "the example Spoolfile listens on ingress, pull, admin and metrics ports");
  return { text, ports };
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** Child pids of `pid` (from /proc), to show nothing was left running. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  test(`${signal} to the documented command stops the server and frees every port`, async () => {
    const [program, ...args] = documentedRunCommand();
    assert.is(program, "node", "the run command starts node itself, so the signal reaches the server");
    const dir = makeTempDir("start-command");
    try {
      symlinkSync(repoPath("dist"), join(dir.path, "dist"));
      const { text, ports } = await exampleWithFreePorts();
      writeFileSync(join(dir.path, "Spoolfile"), text);
      const started = Date.now();
      const child = spawn(process.execPath, args, { cwd: dir.path, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout.on("data", (c) => (output += c));
      child.stderr.on("data", (c) => (output += c));
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once("exit", (code, sig) => resolve({ code, signal: sig })));
      const adminPort = ports[2];
      await eventually(
        async () => {
          if (child.exitCode !== null) throw new Error(`exited early:\n${output}`);
          const response = await fetch(`http://127.0.0.1:${adminPort}/healthz`);
          await response.text();
          return response.status === 200 ? true : undefined;
        },
        15_000,
        `healthz of the documented command\n${output}`,
      );
      // A figure for the closing note, not an assertion (timing belongs to benchmarks).
      console.log(`documented run command healthy after ${Date.now() - started} ms`);
      for (const port of ports) assert.not.ok(await portIsFree(port), `port ${port} is held while running`);
      assert.equal(childrenOf(child.pid!), [], "the server runs in the documented process itself");
      child.kill(signal);
      const result = await exited;
      assert.is(result.code, 0, `clean exit on ${signal}\n${output}`);
      assert.not.ok(isAlive(child.pid!));
      for (const port of ports) assert.ok(await portIsFree(port), `port ${port} is free after ${signal}`);
    } finally {
      dir.cleanup();
    }
  });
}

test.run();
