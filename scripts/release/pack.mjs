// The npm package tarball: npm's own file list (`npm pack --dry-run`, which reads .npmignore),
// copied into a staging directory whose package.json carries the release's version, packed there.
// npm writes every entry with the same fixed mtime and normalised modes, so the same files give
// the same bytes.
import { chmodSync, copyFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { npm } from "./run.mjs";

/** Packs `root` as version `version` into `outDir`; returns the tarball's file name. */
export function packTarball(root, version, outDir, staging, env) {
  const [listing] = JSON.parse(npm(["pack", "--dry-run", "--json", "--ignore-scripts"], root));
  for (const { path } of listing.files) {
    const target = join(staging, path);
    mkdirSync(dirname(target), { recursive: true });
    if (path === "package.json") {
      const pkg = JSON.parse(readFileSync(join(root, path), "utf8"));
      writeFileSync(target, `${JSON.stringify({ ...pkg, version }, null, 2)}\n`);
    } else {
      copyFileSync(join(root, path), target);
      chmodSync(target, statSync(join(root, path)).mode & 0o111 ? 0o755 : 0o644);
    }
  }
  const [packed] = JSON.parse(npm(["pack", "--json", "--ignore-scripts", "--pack-destination", outDir], staging, env));
  return packed.filename;
}
