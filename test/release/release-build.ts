// Builds releases for the release tests with `scripts/release/release.mjs` (the script behind
// `npm run release`), signed with a throwaway Ed25519 key made here, and runs the built verifier.
import { spawnSync } from "node:child_process";
import { createHash, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { cpSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoPath, spoolBin } from "../helpers/repo.js";

export const VERSION = "1.2.3";
export const N = {
  tarball: `spool-${VERSION}.tgz`,
  sbom: `spool_${VERSION}_sbom.spdx.json`,
  checksums: `spool_${VERSION}_checksums.txt`,
  sig: `spool_${VERSION}_checksums.txt.sig`,
  pub: `spool_${VERSION}_checksums.txt.pub.pem`,
  provenance: `spool_${VERSION}_provenance.intoto.jsonl`,
  sbomAttestation: `spool_${VERSION}_sbom.intoto.jsonl`,
};

export interface Key {
  privateKey: KeyObject;
  /** The PKCS#8 PEM, written to `file` (mode 0600). */
  pem: string;
  file: string;
}

export function throwawayKey(dir: string, name = "release-key.pem"): Key {
  const { privateKey } = generateKeyPairSync("ed25519");
  const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const file = join(dir, name);
  writeFileSync(file, pem, { mode: 0o600 });
  return { privateKey, pem, file };
}

export interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `npm run release -- <args>` (the script itself; dist/ is already built by `npm test`). */
export function release(args: string[], env: NodeJS.ProcessEnv = {}): Ran {
  const base = { ...process.env };
  delete base.SPOOL_RELEASE_SIGNING_KEY;
  delete base.SPOOL_RELEASE_KEY_FILE;
  const r = spawnSync(process.execPath, [repoPath("scripts", "release", "release.mjs"), "--version", VERSION, "--skip-build", ...args], { cwd: repoPath(), env: { ...base, ...env }, encoding: "utf8", maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `spool verify-release <args>` with the built CLI. */
export function verify(args: string[], cwd?: string): Ran {
  const r = spawnSync(process.execPath, [spoolBin, "verify-release", ...args], { cwd, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export const sha256 = (bytes: Buffer | string): string => createHash("sha256").update(bytes).digest("hex");

/** A copy of a release directory to tamper with; large files (Keep's executable) are symlinked. */
export function copyRelease(from: string, to: string): string {
  for (const name of readdirSync(from)) {
    if (name.startsWith("keep-linux-")) symlinkSync(join(from, name), join(to, name));
    else cpSync(join(from, name), join(to, name));
  }
  return to;
}

/** Rewrites the checksums line of `name` to the file's current digest and signs the checksums again. */
export function relist(dir: string, name: string, key: Key): void {
  const file = join(dir, N.checksums);
  const digest = sha256(readFileSync(join(dir, name)));
  const text = readFileSync(file, "utf8").replace(new RegExp(`^[0-9a-f]{64}(  ${name.replace(/\./g, "\\.")})$`, "m"), `${digest}$1`);
  writeFileSync(file, text);
  resign(dir, key);
}

export function resign(dir: string, key: Key): void {
  writeFileSync(join(dir, N.sig), `${sign(null, readFileSync(join(dir, N.checksums)), key.privateKey).toString("base64")}\n`);
}

/** The in-toto statements of an attestation file (JSON lines of DSSE envelopes). */
export function statements(text: string): Record<string, any>[] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(Buffer.from(JSON.parse(line).payload, "base64").toString("utf8")));
}

/** An envelope line holding `statement` (payload type as given). */
export function envelope(statement: unknown, payloadType = "application/vnd.in-toto+json"): string {
  return JSON.stringify({ payloadType, payload: Buffer.from(JSON.stringify(statement)).toString("base64"), signatures: [] });
}
