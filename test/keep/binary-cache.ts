// Keep's single executable for tests: built once with `keep/release/build-binary.mjs` and cached
// under the OS temp dir, keyed by a hash of its inputs (the consumer sources, the build script,
// package.json and this node binary), so repeated runs reuse it.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoPath } from "../helpers/repo.js";

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)])).sort();
}

export const hostAsset = `keep-linux-${process.arch === "arm64" ? "arm64" : "amd64"}`;

/** The path of the built `keep-linux-<arch>` for this host. */
export function keepBinary(): string {
  const hash = createHash("sha256");
  for (const dir of ["keep/cli", "keep/consumer", "keep/common", "keep/release"]) for (const f of files(repoPath(dir))) hash.update(f).update(readFileSync(f));
  hash.update(readFileSync(repoPath("package.json")));
  const node = statSync(process.execPath);
  hash.update(`${process.execPath} ${process.version} ${node.size} ${node.mtimeMs}`);
  const dir = join(tmpdir(), `spool-keep-binary-${hash.digest("hex").slice(0, 16)}`);
  const binary = join(dir, hostAsset);
  if (existsSync(binary)) return binary;
  const staging = `${dir}.${process.pid}`;
  mkdirSync(staging, { recursive: true });
  execFileSync(process.execPath, [repoPath("keep", "release", "build-binary.mjs"), "--out", staging], { stdio: ["ignore", "ignore", "ignore"] });
  try {
    renameSync(staging, dir);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another run got there first
  }
  return binary;
}
