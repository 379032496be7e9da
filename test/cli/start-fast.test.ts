import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { runRecordingLoads } from "../helpers/module-loads.js";
import { repoPath, spoolBin } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";

// Start fast (docs/decisions.md D140): a command loads its modules only when it runs. What an editor
// or pre-commit runs once per save (`config fmt`, `config validate`, `version`) loads no runtime module
// and none of the runtime's packages; this is checked by the modules the child really resolved.
const temp = makeTempDir("start-fast");
process.on("exit", () => temp.cleanup());

/** Packages only the runtime (metrics, HTTP client, stores, tracing, the other bindings) or the language server use. */
const RUNTIME_PACKAGES = ["prom-client", "undici", "better-sqlite3", "postgres", "@opentelemetry", "@grpc", "@modelcontextprotocol", "vscode-languageserver"];

function runtimeLoads(loaded: readonly string[]): string[] {
  return loaded.filter((url) => url.includes("/dist/runtime/") || RUNTIME_PACKAGES.some((name) => url.includes(`/node_modules/${name}/`)));
}

const fast = suite("start fast");

fast("spool version loads neither the runtime nor the compiler", () => {
  const run = runRecordingLoads(temp.path, [spoolBin, "version"]);
  assert.is(run.code, 0, run.stderr);
  assert.ok(run.loaded.some((url) => url.endsWith("/dist/cli/main.js")), "the recorder saw the CLI load");
  assert.equal(runtimeLoads(run.loaded), []);
  assert.equal(run.loaded.filter((url) => url.includes("/dist/compiler/") || url.includes("/dist/grammar/")), []);
});

fast("spool config fmt on the example Spoolfile loads no runtime module and no runtime package", () => {
  const run = runRecordingLoads(temp.path, [spoolBin, "config", "fmt", repoPath("Spoolfile")]);
  assert.is(run.code, 0, run.stderr);
  assert.ok(run.loaded.some((url) => url.endsWith("/dist/compiler/format.js")), "the formatter was loaded");
  assert.equal(runtimeLoads(run.loaded), []);
  // Formatting is text work: the IR compiler (compiler/compile.js and the blocks) is not loaded either.
  assert.equal(run.loaded.filter((url) => url.endsWith("/dist/compiler/compile.js") || url.includes("/dist/compiler/blocks/")), []);
});

fast("spool config fmt loads chevrotain as its one-file build, not lodash-es module by module", () => {
  const run = runRecordingLoads(temp.path, [spoolBin, "config", "fmt", repoPath("Spoolfile")]);
  assert.is(run.code, 0, run.stderr);
  assert.ok(run.loaded.some((url) => url.endsWith("/chevrotain/lib/chevrotain.mjs")));
  assert.equal(run.loaded.filter((url) => url.includes("/lodash-es/")), []);
});

fast("spool config validate loads no runtime module", () => {
  const run = runRecordingLoads(temp.path, [spoolBin, "config", "validate", "--config", repoPath("Spoolfile")], { cwd: join(temp.path) });
  assert.ok(run.code === 0 || run.code === 1, run.stderr);
  assert.equal(runtimeLoads(run.loaded), []);
});

fast("spool lsp answers initialize and exits on exit, having loaded no runtime module or runtime package", () => {
  const frame = (message: object) => {
    const body = JSON.stringify({ jsonrpc: "2.0", ...message });
    return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  };
  const input = [frame({ id: 1, method: "initialize", params: { processId: null, rootUri: null, capabilities: {} } }), frame({ method: "initialized", params: {} }), frame({ id: 2, method: "shutdown" }), frame({ method: "exit" })].join("");
  const run = runRecordingLoads(temp.path, [spoolBin, "lsp", "--stdio"], { input });
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, '"serverInfo":{"name":"spool"}');
  assert.equal(runtimeLoads(run.loaded).filter((url) => !url.includes("/vscode-languageserver/")), []);
});

fast("spool run does load the runtime (the recorder would see it)", () => {
  const run = runRecordingLoads(temp.path, [spoolBin, "run", "--config", join(temp.path, "missing.spool")]);
  assert.is.not(run.code, 0);
  assert.ok(runtimeLoads(run.loaded).length > 0, "spool run loaded no runtime module: the recorder is blind");
});

fast.run();
