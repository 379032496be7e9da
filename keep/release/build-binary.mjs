#!/usr/bin/env node
// Builds Keep's release asset for the host architecture (keep/README.md, "Release assets"): the
// consumer commands (fetch, exec, version) bundled by esbuild into one CommonJS file, turned into
// a Node single-executable-application blob, and injected by postject into a copy of this `node`.
// Prints the asset's SHA-256. Usage: node keep/release/build-binary.mjs [--out DIR] [--version X.Y.Z]
// (--version stamps a release's version instead of package.json's). The same tree and the same
// `node` give the same bytes: the blob records the bundle's path, so it is a fixed relative one.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { inject } from "postject";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const flag = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const outDir = resolve(flag("--out") ?? join(root, "dist", "keep-release"));
const arch = { x64: "amd64", arm64: "arm64" }[process.arch];
if (!arch || process.platform !== "linux") {
  process.stderr.write(`build-binary: no release asset for ${process.platform}/${process.arch} (linux x64 or arm64)\n`);
  process.exit(1);
}
const asset = `keep-linux-${arch}`;
const version = flag("--version") ?? JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
const work = mkdtempSync(join(tmpdir(), "keep-binary-"));
try {
  // version.ts reads package.json at run time; the executable carries the version instead.
  const versionPlugin = {
    name: "keep-version",
    setup(b) {
      b.onLoad({ filter: /keep[\\/]common[\\/]version\.ts$/ }, () => ({ contents: `export const keepVersion = ${JSON.stringify(version)};`, loader: "ts" }));
    },
  };
  const bundle = join(work, "keep.cjs");
  const result = await build({
    entryPoints: [join(root, "keep", "cli", "consumer-main.ts")],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    outfile: bundle,
    metafile: true,
    legalComments: "none",
    logLevel: "warning",
    plugins: [versionPlugin],
  });
  // Only the consumer: no server, no store, no SQLite, no npm package at all.
  const inputs = Object.keys(result.metafile.inputs).map((p) => relative(root, resolve(root, p)));
  const foreign = inputs.filter((p) => !/^keep[\\/](cli|consumer|common)[\\/]/.test(p));
  if (foreign.length > 0 || inputs.some((p) => /cli[\\/](main|serve-command|admin|dev)/.test(p))) {
    throw new Error(`the bundle would hold more than the consumer: ${foreign.join(", ")}`);
  }
  writeFileSync(join(work, "sea-config.json"), JSON.stringify({ main: "keep.cjs", output: "sea.blob", disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: false }));
  execFileSync(process.execPath, ["--experimental-sea-config", "sea-config.json"], { cwd: work, stdio: ["ignore", "ignore", "inherit"] });
  mkdirSync(outDir, { recursive: true });
  const target = join(outDir, asset);
  rmSync(target, { force: true });
  copyFileSync(process.execPath, target);
  chmodSync(target, 0o755);
  await inject(target, "NODE_SEA_BLOB", readFileSync(join(work, "sea.blob")), { sentinelFuse: "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2" });
  const sha = createHash("sha256").update(readFileSync(target)).digest("hex");
  writeFileSync(`${target}.sha256`, `${sha}  ${asset}\n`);
  process.stdout.write(`${sha}  ${target}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
