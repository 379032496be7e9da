import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath } from "../helpers/repo.js";

// The layers import one way: cli → runtime → compiler → grammar (docs/architecture.md "Rules").
// The runtime and the CLI reach the grammar only through compiler/index.ts re-exports.
// Keep (keep/) is a separate product in the same package: it and the queue import nothing of
// each other (keep/README.md, "Layout"). The worker library (client/, `spool/client`) runs in
// workers' processes: it talks to the Pull API over HTTP and imports nothing of the server, nor the
// server of it; the examples use it only as a user would.
const forbidden: Record<string, string[]> = {
  grammar: ["compiler", "runtime", "cli", "keep", "client"],
  compiler: ["runtime", "cli", "keep", "client"],
  runtime: ["cli", "grammar", "keep", "client"],
  cli: ["grammar", "keep", "client"],
  keep: ["grammar", "compiler", "runtime", "cli", "client"],
  client: ["grammar", "compiler", "runtime", "cli", "keep"],
  examples: ["grammar", "compiler", "runtime", "cli", "keep", "client"],
  // The language server (spool lsp) reads the Spoolfile through the compiler and never loads the runtime.
  lsp: ["grammar", "runtime", "cli", "keep", "client"],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const layers = suite("architecture");

for (const [layer, notAllowed] of Object.entries(forbidden)) {
  layers(`${layer}/ imports none of ${notAllowed.join(", ")}`, () => {
    const violations: string[] = [];
    for (const file of sourceFiles(repoPath(layer))) {
      for (const m of readFileSync(file, "utf8").matchAll(/(?:from\s+|import\()"(\.[^"]+)"/g)) {
        const target = relative(repoPath(), join(file, "..", m[1])).split("/")[0];
        if (notAllowed.includes(target)) violations.push(`${relative(repoPath(), file)} imports ${m[1]}`);
      }
    }
    assert.equal(violations, []);
  });
}

// `spool verify-release` checks a download before anything else of it runs: it and its checks
// (cli/release/) load node: modules and each other only (docs/architecture.md "Layout").
layers("cli/release/ and verify-release import only node: modules and cli/release/", () => {
  const files = [...sourceFiles(repoPath("cli", "release")), repoPath("cli", "commands", "verify-release.ts")];
  const violations: string[] = [];
  for (const file of files) {
    for (const m of readFileSync(file, "utf8").matchAll(/^import\s+(type\s+)?[^;]*?from\s+"([^"]+)"/gm)) {
      const [typeOnly, target] = [m[1] !== undefined, m[2]];
      if (target.startsWith("node:") || typeOnly) continue;
      const resolved = relative(repoPath(), join(file, "..", target));
      if (!resolved.startsWith(join("cli", "release") + "/")) violations.push(`${relative(repoPath(), file)} imports ${target}`);
    }
  }
  assert.equal(violations, []);
});

// Inside runtime/, a feature (one API or one delivery pipeline) imports shared folders but never a
// sibling feature, and a shared folder imports no feature: what two features need lives in a
// shared folder. app/ wires the folders together and is imported by none of them (only by cli/).
// Every folder is one of the three (docs/architecture.md "Layout").
const runtimeFeatures = ["admin", "delivery", "grpc", "ingress", "pull", "reload"];
const runtimeShared = ["auth", "http", "observability", "ratelimit", "secrets", "store", "time", "tracing"];
const runtimeComposition = ["app"];
// The error catalogue is the one loose file in runtime/ (every API answers from it); nothing else is.
const runtimeRootFiles = ["errors.ts"];

layers("every runtime/ folder is a feature, shared or composition", () => {
  const folders = readdirSync(repoPath("runtime")).filter((name) => statSync(repoPath("runtime", name)).isDirectory());
  assert.equal(folders.filter((name) => ![...runtimeFeatures, ...runtimeShared, ...runtimeComposition].includes(name)), []);
});

layers("runtime/ holds no loose .ts file but the error catalogue", () => {
  const loose = readdirSync(repoPath("runtime")).filter((name) => name.endsWith(".ts") && !statSync(repoPath("runtime", name)).isDirectory());
  assert.equal(loose.filter((name) => !runtimeRootFiles.includes(name)), []);
});

layers("nothing in runtime/ but app/ imports app/", () => {
  const violations: string[] = [];
  for (const file of sourceFiles(repoPath("runtime"))) {
    if (relative(repoPath("runtime"), file).split("/")[0] === "app") continue;
    for (const m of readFileSync(file, "utf8").matchAll(/from\s+"(\.[^"]+)"/g)) {
      const [top, target] = relative(repoPath(), join(file, "..", m[1])).split("/");
      if (top === "runtime" && target === "app") violations.push(`${relative(repoPath(), file)} imports ${m[1]}`);
    }
  }
  assert.equal(violations, []);
});

layers("runtime features import no sibling feature; shared folders import no feature", () => {
  const violations: string[] = [];
  for (const folder of [...runtimeFeatures, ...runtimeShared]) {
    for (const file of sourceFiles(repoPath("runtime", folder))) {
      for (const m of readFileSync(file, "utf8").matchAll(/from\s+"(\.[^"]+)"/g)) {
        const [top, target] = relative(repoPath(), join(file, "..", m[1])).split("/");
        if (top === "runtime" && target !== folder && runtimeFeatures.includes(target)) violations.push(`${relative(repoPath(), file)} imports ${m[1]}`);
      }
    }
  }
  assert.equal(violations, []);
});

// The store backends share one layout: the same part files in each (plus backend-specific helpers),
// and no backend imports another.
const storeBackends = ["memory", "postgres", "sqlite"];
const storeParts = ["store", "context", "enqueue", "leases", "attempts", "messages", "analytics", "lifecycle", "retention"];

layers("every store backend has the same part files", () => {
  for (const backend of storeBackends) {
    const files = readdirSync(repoPath("runtime", "store", backend));
    assert.equal(storeParts.filter((part) => !files.includes(`${part}.ts`)), [], backend);
  }
});

layers("no store backend imports another", () => {
  const violations: string[] = [];
  for (const backend of storeBackends) {
    for (const file of sourceFiles(repoPath("runtime", "store", backend))) {
      for (const m of readFileSync(file, "utf8").matchAll(/from\s+"(\.[^"]+)"/g)) {
        const [top, store, target] = relative(repoPath(), join(file, "..", m[1])).split("/");
        if (top === "runtime" && store === "store" && target !== backend && storeBackends.includes(target)) violations.push(`${relative(repoPath(), file)} imports ${m[1]}`);
      }
    }
  }
  assert.equal(violations, []);
});

// Inside keep/: the library and the consumer core never reach the server or the CLI.
for (const part of ["client", "consumer", "common"]) {
  layers(`keep/${part}/ imports nothing from keep/server or keep/cli`, () => {
    const violations: string[] = [];
    for (const file of sourceFiles(repoPath("keep", part))) {
      for (const m of readFileSync(file, "utf8").matchAll(/from\s+"(\.[^"]+)"/g)) {
        const target = relative(repoPath("keep"), join(file, "..", m[1])).split("/")[0];
        if (target === "server" || target === "cli") violations.push(`${relative(repoPath(), file)} imports ${m[1]}`);
      }
    }
    assert.equal(violations, []);
  });
}

layers("keep's server never loads node:http (TLS only: node:https)", () => {
  const loads: string[] = [];
  for (const file of sourceFiles(repoPath("keep", "server"))) {
    for (const m of readFileSync(file, "utf8").matchAll(/^import\s+(type\s+)?[^;]*?from\s+"(node:)?(http|http2|net)"/gm)) {
      if (!m[1]) loads.push(`${relative(repoPath(), file)} imports ${m[3]}`);
    }
  }
  assert.equal(loads, []);
});

layers("client/ depends on undici and node: modules only (the package's one dependency a worker installs)", () => {
  const outside: string[] = [];
  for (const file of sourceFiles(repoPath("client"))) {
    for (const m of readFileSync(file, "utf8").matchAll(/(?:from|import)\s+"([^"]+)"/g)) {
      if (!m[1].startsWith(".") && !m[1].startsWith("node:") && m[1] !== "undici") outside.push(`${relative(repoPath(), file)} imports ${m[1]}`);
    }
  }
  assert.equal(outside, []);
});

layers.run();
