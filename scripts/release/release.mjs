#!/usr/bin/env node
// `npm run release -- --version X.Y.Z --out DIR`: builds a release users can verify with
// `spool verify-release` (docs/releases.md): the npm tarball, Keep's single executable(s), the SBOM,
// the checksums file and its Ed25519 signature with the public key, and the provenance and SBOM
// attestations. The signing key (PKCS#8 PEM) comes from --key-file, $SPOOL_RELEASE_KEY_FILE (a
// path) or $SPOOL_RELEASE_SIGNING_KEY (the PEM itself), never from an argument's value.
import { createHash, createPrivateKey, createPublicKey, sign } from "node:crypto";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { packTarball } from "./pack.mjs";
import { git, npm } from "./run.mjs";
import { releaseSbom } from "./sbom.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const USAGE = `usage: npm run release -- --version X.Y.Z --out DIR [--key-file F | --unsigned] [--skip-build]
                   [--skip-keep-binary | --keep-binary FILE …]
The signing key is a PKCS#8 PEM Ed25519 private key: --key-file F, $SPOOL_RELEASE_KEY_FILE (a path) or
$SPOOL_RELEASE_SIGNING_KEY (the PEM text).`;

function usage(message) {
  process.stderr.write(`release: ${message}\n${USAGE}\n`);
  process.exit(2);
}

let flags;
try {
  flags = parseArgs({
    options: {
      version: { type: "string" },
      out: { type: "string" },
      "key-file": { type: "string" },
      unsigned: { type: "boolean" },
      "skip-build": { type: "boolean" },
      "skip-keep-binary": { type: "boolean" },
      "keep-binary": { type: "string", multiple: true },
      help: { type: "boolean" },
    },
    strict: true,
    allowPositionals: false,
  }).values;
} catch (error) {
  usage(error.message);
}
if (flags.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const version = flags.version ?? usage("--version is required");
if (!/^\d+\.\d+\.\d+$/.test(version)) usage(`--version must be X.Y.Z (got "${version}"; the tag is vX.Y.Z, the version has no v)`);
const outDir = resolve(flags.out ?? usage("--out is required"));
if (existsSync(outDir) && readdirSync(outDir).length > 0) usage(`--out "${outDir}" is not empty (a release directory holds one release)`);
if (flags["skip-keep-binary"] && flags["keep-binary"]) usage("--skip-keep-binary and --keep-binary exclude each other");
for (const file of flags["keep-binary"] ?? []) {
  if (!/^keep-linux-(amd64|arm64)$/.test(basename(file))) usage(`--keep-binary "${file}" must be named keep-linux-amd64 or keep-linux-arm64`);
  if (!existsSync(file)) usage(`--keep-binary "${file}" does not exist`);
}
const signingKey = loadSigningKey();

/** The Ed25519 private key, or undefined with --unsigned. */
function loadSigningKey() {
  const keyFile = flags["key-file"] ?? process.env.SPOOL_RELEASE_KEY_FILE;
  if (flags.unsigned) {
    if (flags["key-file"]) usage("--unsigned and --key-file exclude each other");
    return undefined;
  }
  let pem, from;
  if (keyFile) {
    from = `key file "${keyFile}"`;
    try {
      pem = readFileSync(keyFile, "utf8");
    } catch (error) {
      usage(`cannot read the ${from}: ${error.code ?? error.message}`);
    }
  } else if (process.env.SPOOL_RELEASE_SIGNING_KEY) {
    from = "$SPOOL_RELEASE_SIGNING_KEY";
    pem = process.env.SPOOL_RELEASE_SIGNING_KEY;
  } else {
    usage("no signing key: give --key-file, set SPOOL_RELEASE_KEY_FILE or SPOOL_RELEASE_SIGNING_KEY, or pass --unsigned");
  }
  let key;
  try {
    key = createPrivateKey({ key: pem, format: "pem" });
  } catch {
    usage(`the ${from} is not a PEM private key`); // the text itself is never printed
  }
  if (key.asymmetricKeyType !== "ed25519") usage(`the ${from} is not an Ed25519 key (${key.asymmetricKeyType})`);
  return key;
}

const sha256 = (path) => createHash("sha256").update(readFileSync(path)).digest("hex");
const startedOn = new Date().toISOString();
const commit = git(["rev-parse", "HEAD"], root) ?? "unknown";
const epochText = process.env.SOURCE_DATE_EPOCH ?? git(["log", "-1", "--format=%ct", "HEAD"], root) ?? "0";
if (!/^\d+$/.test(epochText)) usage(`SOURCE_DATE_EPOCH must be whole seconds since 1970 (got "${epochText}")`);
const epoch = Number(epochText);
// The origin's URL goes into the provenance: never with credentials in it.
const repository = git(["remote", "get-url", "origin"], root)?.replace(/^([a-z+]+:\/\/)[^@/]*@/i, "$1");
if ((git(["status", "--porcelain", "--untracked-files=no"], root) ?? "") !== "") {
  process.stderr.write("release: warning: the working tree has uncommitted changes; the release is not the commit's\n");
}

if (!flags["skip-build"]) npm(["run", "build"], root);
// The file names, formats and checks are the verifier's own (dist/cli/release/), loaded once built.
const names = (await import("../../dist/cli/release/formats.js")).releaseFileNames(version);
const { provenanceLine, sbomAttestationLine } = await import("./attest.mjs");
mkdirSync(outDir, { recursive: true });
const work = mkdtempSync(join(tmpdir(), "spool-release-"));
try {
  const env = { ...process.env, SOURCE_DATE_EPOCH: String(epoch) };
  // 1. The npm package.
  const tarball = packTarball(root, version, outDir, join(work, "package"), env);
  // 2. Keep's single executable: built here for the host, or the ones given (other architectures).
  const executables = [];
  if (!flags["skip-keep-binary"]) {
    const given = flags["keep-binary"];
    if (!given) execFileSync(process.execPath, [join(root, "keep", "release", "build-binary.mjs"), "--out", join(work, "keep"), "--version", version], { stdio: ["ignore", "ignore", "inherit"] });
    for (const file of given ?? readdirSync(join(work, "keep")).filter((n) => !n.endsWith(".sha256")).map((n) => join(work, "keep", n))) {
      copyFileSync(file, join(outDir, basename(file)));
      executables.push(basename(file));
    }
  }
  const artifacts = [tarball, ...executables].sort().map((name) => ({ name, sha256: sha256(join(outDir, name)) }));
  // 3. The SBOM, checked by the verifier's own rules before anything is signed.
  const sbom = releaseSbom(root, version, artifacts.find((a) => a.name === tarball), artifacts.filter((a) => a.name !== tarball), epoch);
  const sbomText = `${JSON.stringify(sbom, null, 2)}\n`;
  (await import("../../dist/cli/release/sbom.js")).checkSbom(sbomText, names.sbom);
  writeFileSync(join(outDir, names.sbom), sbomText);
  // 4. The checksums file (sha256sum format, sorted by name) and its signature.
  const listed = [...artifacts, { name: names.sbom, sha256: sha256(join(outDir, names.sbom)) }].sort((a, b) => (a.name < b.name ? -1 : 1));
  const checksums = Buffer.from(listed.map((a) => `${a.sha256}  ${a.name}\n`).join(""));
  writeFileSync(join(outDir, names.checksums), checksums);
  if (signingKey) {
    writeFileSync(join(outDir, names.signature), `${sign(null, checksums, signingKey).toString("base64")}\n`);
    writeFileSync(join(outDir, names.publicKey), createPublicKey(signingKey).export({ type: "spki", format: "pem" }));
  }
  // 5. The attestations (not in the checksums: they describe a run, which differs from run to run).
  const npmVersion = npm(["--version"], root).trim();
  const build = { version, commit, ref: git(["describe", "--tags", "--exact-match"], root), repository, epoch, npmVersion, startedOn, keepBinaries: flags["keep-binary"] ? "given" : flags["skip-keep-binary"] ? "none" : "built" };
  writeFileSync(join(outDir, names.provenance), provenanceLine(artifacts, build));
  writeFileSync(join(outDir, names.sbomAttestation), sbomAttestationLine(artifacts, sbom));
  // 6. The verifier's own check of what was written.
  const { verifyRelease, resultLines } = await import("../../dist/cli/release/verify.js");
  const result = await verifyRelease({ checksums: join(outDir, names.checksums), requireSbom: true, requireProvenance: true, requireSignature: !!signingKey });
  for (const line of resultLines(result)) process.stdout.write(`${line}\n`);
  if (!signingKey) process.stdout.write(`unsigned: --unsigned given, so no ${names.signature} or ${names.publicKey}; verify-release --require-signature will refuse this release\n`);
} catch (error) {
  process.stderr.write(`release: ${error.message ?? error}\n`);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
