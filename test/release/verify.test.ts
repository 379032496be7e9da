// A full release built by `npm run release` (scripts/release/release.mjs) with a throwaway key,
// verified by the built `spool verify-release`; then every kind of tampering on copies of it.
import { spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { copyRelease, envelope, N, relist, resign, sha256, statements, throwawayKey, verify, VERSION, release, type Key, type Ran } from "./release-build.js";

const test = suite("verify-release");
const tmp = makeTempDir("verify-release");
const dir = join(tmp.path, "release");
const asset = `keep-linux-${process.arch === "arm64" ? "arm64" : "amd64"}`;
let key: Key;
let built: Ran;
let n = 0;

test.before(() => {
  key = throwawayKey(tmp.path);
  built = release(["--out", dir, "--key-file", key.file]);
  if (built.status !== 0) throw new Error(`release failed: ${built.stderr}`);
});
test.after(() => tmp.cleanup());

/** A fresh copy of the release to tamper with. */
function copy(): string {
  const to = join(tmp.path, `copy-${n++}`);
  mkdirSync(to);
  return copyRelease(dir, to);
}

function failsWith(r: Ran, message: string | RegExp): void {
  assert.is(r.status, 1, r.stderr);
  assert.is(r.stdout, "", "nothing on stdout");
  if (typeof message === "string") assert.is(r.stderr, `verify-release: ${message}\n`);
  else assert.match(r.stderr, message);
}

const checks = (d: string): string => join(d, N.checksums);

test("the release holds the contract's files, the checksums list the artifacts and the SBOM (sorted)", () => {
  assert.match(built.stdout, /^verified 3 artifact\(s\) using /);
  const files = spawnSync("ls", [dir], { encoding: "utf8" }).stdout.trim().split("\n");
  assert.equal(files, [asset, N.tarball, N.checksums, N.pub, N.sig, N.provenance, N.sbomAttestation, N.sbom]);
  const lines = readFileSync(checks(dir), "utf8").split("\n");
  assert.equal(lines, [...[asset, N.tarball, N.sbom].map((f) => `${sha256(readFileSync(join(dir, f)))}  ${f}`), ""]);
  // sha256sum itself accepts the file (docs/releases.md shows it as the no-Spool check).
  assert.is(spawnSync("sha256sum", ["-c", N.checksums], { cwd: dir, encoding: "utf8" }).status, 0);
});

test("the tarball is the package at the release's version: dist/ in, tests out", () => {
  const list = spawnSync("tar", ["-tzf", join(dir, N.tarball)], { encoding: "utf8" }).stdout.split("\n");
  for (const f of ["package/package.json", "package/dist/cli/main.js", "package/dist/keep/cli/main.js", "package/scripts/patch-postgres-driver.mjs", "package/LICENSE"]) assert.ok(list.includes(f), f);
  assert.equal(list.filter((f) => /^package\/(test|dist\/test|fixtures|\.ci|node_modules)\//.test(f)), []);
  const pkg = JSON.parse(spawnSync("tar", ["-xOzf", join(dir, N.tarball), "package/package.json"], { encoding: "utf8" }).stdout);
  assert.is(pkg.version, VERSION);
  const keepVersion = spawnSync(join(dir, asset), ["version"], { encoding: "utf8" });
  assert.is(keepVersion.stdout, `${VERSION}\n`, "Keep's executable carries the release's version");
});

test("SBOM: npm's SPDX 2.3 made the release's: the application at the version, Keep's executable beside it", () => {
  const sbom = JSON.parse(readFileSync(join(dir, N.sbom), "utf8"));
  assert.is(sbom.spdxVersion, "SPDX-2.3");
  const described = sbom.packages.filter((p: any) => sbom.documentDescribes.includes(p.SPDXID));
  assert.equal(described.map((p: any) => [p.name, p.versionInfo, p.primaryPackagePurpose, p.checksums[0].checksumValue]), [
    ["spool", VERSION, "APPLICATION", sha256(readFileSync(join(dir, N.tarball)))],
    [asset, VERSION, "APPLICATION", sha256(readFileSync(join(dir, asset)))],
  ]);
  assert.ok(sbom.packages.some((p: any) => p.name === "better-sqlite3"), "runtime dependencies are listed");
  assert.not.ok(sbom.packages.some((p: any) => p.name === "typescript"), "dev dependencies are not");
  const [att] = statements(readFileSync(join(dir, N.sbomAttestation), "utf8"));
  assert.equal(att.predicate, sbom, "the SBOM attestation's predicate is the SBOM");
  const [prov] = statements(readFileSync(join(dir, N.provenance), "utf8"));
  assert.is(prov.predicateType, "https://slsa.dev/provenance/v1");
  assert.equal(prov.subject.map((s: any) => s.name).sort(), [asset, N.tarball]);
  assert.match(prov.predicate.buildDefinition.resolvedDependencies[0].digest.gitCommit, /^[0-9a-f]{40}$/);
});

test("docs/releases.md's check without Spool: OpenSSL verifies the signature, sha256sum the files", () => {
  const d = copy();
  const sh = (cmd: string) => spawnSync("bash", ["-c", cmd], { cwd: d, encoding: "utf8" });
  const docs = readFileSync(repoPath("docs", "releases.md"), "utf8");
  const block = /base64 -d .*\nopenssl pkeyutl .*\nsha256sum .*\n/.exec(docs)![0].replaceAll("1.2.3", VERSION).replace("spool-release.pub.pem", N.pub);
  const ok = sh(`set -e\n${block}`);
  assert.is(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /Signature Verified Successfully/);
  writeFileSync(join(d, N.checksums), `${readFileSync(join(d, N.checksums), "utf8")}\n`);
  assert.is.not(sh(`set -e\n${block}`).status, 0, "a changed checksums file fails OpenSSL's check too");
});

test("verifies: exit 0, the five text lines with absolute paths", () => {
  const r = verify(["--checksums", checks(dir)]);
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stderr, "");
  assert.equal(r.stdout.split("\n"), [
    `verified 3 artifact(s) using ${checks(dir)}`,
    `sbom: verified via ${join(dir, N.sbom)}`,
    `signature: verified (ed25519) via ${join(dir, N.pub)}`,
    `provenance: verified via ${join(dir, N.provenance)}`,
    `sbom-attestation: verified via ${join(dir, N.sbomAttestation)}`,
    "",
  ]);
});

test("--json: one line, the contract's keys in order, relative paths resolved against the working directory", () => {
  const r = verify(["--checksums", `release/${N.checksums}`, "--signature", `release/${N.sig}`, "--public-key", `release/${N.pub}`, "--require-signature", "--require-sbom", "--require-provenance", "--json"], tmp.path);
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stdout.split("\n").length, 2, "one line");
  const j = JSON.parse(r.stdout);
  assert.equal(Object.keys(j), ["checksums_file", "base_dir", "artifact_count", "artifacts", "sbom_verified", "sbom_file", "signature_verified", "signature_file", "public_key_file", "signature_algorithm", "provenance_verified", "provenance_file", "sbom_attest_verified", "sbom_attest_file"]);
  assert.equal(j, {
    checksums_file: checks(dir),
    base_dir: dir,
    artifact_count: 3,
    artifacts: [asset, N.tarball, N.sbom].map((name) => ({ name, sha256: sha256(readFileSync(join(dir, name))) })),
    sbom_verified: true,
    sbom_file: join(dir, N.sbom),
    signature_verified: true,
    signature_file: join(dir, N.sig),
    public_key_file: join(dir, N.pub),
    signature_algorithm: "ed25519",
    provenance_verified: true,
    provenance_file: join(dir, N.provenance),
    sbom_attest_verified: true,
    sbom_attest_file: join(dir, N.sbomAttestation),
  });
});

test("checks that did not run: 'not verified' lines and no optional keys; --base-dir elsewhere", () => {
  const d = copy();
  const base = join(tmp.path, `base-${n++}`);
  mkdirSync(base);
  // The checksums alone in one directory (uppercase hex, `*` binary marker, CRLF, blank lines),
  // the files in another; no SBOM entry, no signature beside it.
  const only = join(base, "sums.txt");
  const digest = (f: string) => sha256(readFileSync(join(d, f)));
  writeFileSync(only, `${digest(asset).toUpperCase()} *${asset}\r\n\n  ${digest(N.tarball)}  ${N.tarball}  \n`);
  const r = verify(["--checksums", only, "--base-dir", d, "--json"]);
  assert.is(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j, {
    checksums_file: only,
    base_dir: d,
    artifact_count: 2,
    artifacts: [asset, N.tarball].map((name) => ({ name, sha256: digest(name) })),
    sbom_verified: false,
    signature_verified: false,
    provenance_verified: true,
    provenance_file: join(d, N.provenance),
    sbom_attest_verified: true,
    sbom_attest_file: join(d, N.sbomAttestation),
  });
  assert.equal(Object.keys(j), ["checksums_file", "base_dir", "artifact_count", "artifacts", "sbom_verified", "signature_verified", "provenance_verified", "provenance_file", "sbom_attest_verified", "sbom_attest_file"]);
  rmSync(join(d, N.provenance));
  rmSync(join(d, N.sbomAttestation));
  const text = verify(["--checksums", only, "--base-dir", d]);
  assert.is(text.status, 0, text.stderr);
  assert.equal(text.stdout.split("\n"), [`verified 2 artifact(s) using ${only}`, "sbom: not verified", "signature: not verified", "provenance: not verified", "sbom-attestation: not verified", ""]);
  const json = JSON.parse(verify(["--checksums", only, "--base-dir", d, "--json"]).stdout);
  assert.equal(Object.keys(json), ["checksums_file", "base_dir", "artifact_count", "artifacts", "sbom_verified", "signature_verified", "provenance_verified", "sbom_attest_verified"]);
  failsWith(verify(["--checksums", only, "--base-dir", d, "--require-sbom"]), `--require-sbom: no checksums entry ends with "_sbom.spdx.json" in "${only}"`);
  failsWith(verify(["--checksums", only, "--base-dir", d, "--require-provenance"]), /^verify-release: --require-provenance: no file ending/);
  failsWith(verify(["--checksums", only, "--base-dir", d, "--require-signature", "--json"]), /^verify-release: --require-signature: no signature for /);
});

test("a changed artifact byte fails naming the file; so does a missing one", () => {
  const d = copy();
  const bytes = readFileSync(join(d, N.tarball));
  bytes[1000] ^= 1;
  writeFileSync(join(d, N.tarball), bytes);
  failsWith(verify(["--checksums", checks(d)]), `checksum mismatch for "${N.tarball}"`);
  failsWith(verify(["--checksums", checks(d), "--json"]), `checksum mismatch for "${N.tarball}"`);
  rmSync(join(d, N.tarball));
  failsWith(verify(["--checksums", checks(d)]), new RegExp(`^verify-release: checksum mismatch for "${N.tarball}": cannot read .*: no such file\\n$`));
});

test("a changed checksums line: the digest no longer matches, or (rewritten to match a changed file) the signature fails", () => {
  const d = copy();
  const lines = readFileSync(checks(d), "utf8").split("\n");
  const line = lines.findIndex((l) => l.endsWith(N.sbom));
  lines[line] = `${lines[line][0] === "0" ? "1" : "0"}${lines[line].slice(1)}`;
  writeFileSync(checks(d), lines.join("\n"));
  failsWith(verify(["--checksums", checks(d)]), `checksum mismatch for "${N.sbom}"`);
  // An attacker who changes the tarball and its line: the checksums pass, the signature does not.
  const e = copy();
  writeFileSync(join(e, N.tarball), Buffer.concat([readFileSync(join(e, N.tarball)), Buffer.from("x")]));
  const digest = sha256(readFileSync(join(e, N.tarball)));
  writeFileSync(checks(e), readFileSync(checks(e), "utf8").replace(/^[0-9a-f]{64}(  spool-1\.2\.3\.tgz)$/m, `${digest}$1`));
  failsWith(verify(["--checksums", checks(e)]), `signature "${join(e, N.sig)}" does not match checksums file "${checks(e)}" with public key "${join(e, N.pub)}"`);
  // The signature covers the exact bytes: one more blank line (still a valid list) fails it too.
  const f = copy();
  writeFileSync(checks(f), `${readFileSync(checks(f), "utf8")}\n`);
  failsWith(verify(["--checksums", checks(f)]), /^verify-release: signature ".*" does not match checksums file/);
});

test("signature: bad, missing with --require-signature, not base64, wrong key type, one flag without the other", () => {
  const d = copy();
  const other = throwawayKey(d, "other-key.pem");
  resign(d, other);
  failsWith(verify(["--checksums", checks(d), "--require-signature"]), `signature "${join(d, N.sig)}" does not match checksums file "${checks(d)}" with public key "${join(d, N.pub)}"`);
  writeFileSync(join(d, N.sig), "not base64!\n");
  failsWith(verify(["--checksums", checks(d)]), `signature "${join(d, N.sig)}" is not base64 of a 64-byte Ed25519 signature`);
  writeFileSync(join(d, N.sig), `${Buffer.alloc(32).toString("base64")}\n`);
  failsWith(verify(["--checksums", checks(d)]), `signature "${join(d, N.sig)}" is not base64 of a 64-byte Ed25519 signature`);
  resign(d, key);
  const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ type: "spki", format: "pem" });
  writeFileSync(join(d, "rsa.pem"), rsa);
  failsWith(verify(["--checksums", checks(d), "--signature", join(d, N.sig), "--public-key", join(d, "rsa.pem")]), `public key "${join(d, "rsa.pem")}" is not an Ed25519 key (rsa)`);
  writeFileSync(join(d, "garbage.pem"), "hello\n");
  failsWith(verify(["--checksums", checks(d), "--signature", join(d, N.sig), "--public-key", join(d, "garbage.pem")]), `public key "${join(d, "garbage.pem")}" is not a PEM "PUBLIC KEY"`);
  failsWith(verify(["--checksums", checks(d), "--signature", join(d, N.sig)]), "--signature and --public-key must be given together");
  failsWith(verify(["--checksums", checks(d), "--public-key", join(d, N.pub)]), "--signature and --public-key must be given together");
  assert.is(verify(["--checksums", checks(d), "--require-signature"]).status, 0);
  // Missing: with only one of the two default files there is no signature at all.
  rmSync(join(d, N.sig));
  assert.is(verify(["--checksums", checks(d)]).status, 0, "without --require-signature an unsigned release passes");
  failsWith(verify(["--checksums", checks(d), "--require-signature"]), new RegExp(`^verify-release: --require-signature: no signature for "${checks(d)}"`));
  failsWith(verify(["--checksums", checks(d), "--signature", join(d, N.sig), "--public-key", join(d, N.pub)]), `signature "${join(d, N.sig)}" cannot be read: no such file`);
});

test("a malformed or an empty checksums file fails", () => {
  const d = copy();
  writeFileSync(checks(d), `${readFileSync(checks(d), "utf8")}deadbeef  short-digest.txt\n`);
  failsWith(verify(["--checksums", checks(d)]), `checksums file "${checks(d)}" line 4 is malformed (want "<64 hex digits>  <file name>")`);
  writeFileSync(checks(d), "");
  failsWith(verify(["--checksums", checks(d)]), `checksums file "${checks(d)}" has no entries`);
  writeFileSync(checks(d), "\n  \n\n");
  failsWith(verify(["--checksums", checks(d), "--json"]), `checksums file "${checks(d)}" has no entries`);
  failsWith(verify(["--checksums", join(d, "absent.txt")]), `checksums file "${join(d, "absent.txt")}" cannot be read: no such file`);
});

/** A copy whose SBOM was edited, then relisted and signed again (so only the SBOM rules can fail). */
function editedSbom(edit: (doc: any) => void): string {
  const d = copy();
  const doc = JSON.parse(readFileSync(join(d, N.sbom), "utf8"));
  edit(doc);
  writeFileSync(join(d, N.sbom), JSON.stringify(doc));
  relist(d, N.sbom, key);
  return d;
}

test("SBOM: wrong spdxVersion, no packages and the other rules each fail", () => {
  const cases: [(doc: any) => void, string][] = [
    [(doc) => (doc.spdxVersion = "SPDX-2.2"), `spdxVersion must be "SPDX-2.3" (got "SPDX-2.2")`],
    [(doc) => (doc.packages = []), "packages must be a non-empty list"],
    [(doc) => delete doc.packages, "packages must be a non-empty list"],
    [(doc) => (doc.dataLicense = "MIT"), `dataLicense must be "CC0-1.0" (got "MIT")`],
    [(doc) => (doc.documentNamespace = " "), "documentNamespace must be a non-empty string"],
    [(doc) => delete doc.packages[3].name, "packages[3] needs an SPDXID and a name"],
    [(doc) => doc.packages.forEach((p: any) => (p.primaryPackagePurpose = "LIBRARY")), `no package has primaryPackagePurpose "APPLICATION"`],
    [(doc) => (doc.documentDescribes = []), "documentDescribes must be a non-empty list"],
    [(doc) => doc.documentDescribes.push("SPDXRef-nothing"), `documentDescribes names "SPDXRef-nothing", which is not a package's SPDXID`],
  ];
  for (const [edit, rule] of cases) {
    const d = editedSbom(edit);
    failsWith(verify(["--checksums", checks(d)]), `sbom "${join(d, N.sbom)}": ${rule}`);
  }
  // Any case of APPLICATION is accepted.
  const d = editedSbom((doc) => doc.packages.forEach((p: any) => p.primaryPackagePurpose === "APPLICATION" && (p.primaryPackagePurpose = "application")));
  const r = verify(["--checksums", checks(d), "--require-sbom", "--require-signature"]);
  assert.is(r.status, 0, r.stderr);
});

test("--sbom must be a checksums entry; several SBOM entries need --sbom", () => {
  const d = copy();
  writeFileSync(join(d, "other.json"), readFileSync(join(d, N.sbom)));
  failsWith(verify(["--checksums", checks(d), "--sbom", join(d, "other.json")]), `sbom "${join(d, "other.json")}" is not listed in checksums file "${checks(d)}"`);
  // A file of the listed name elsewhere must have the listed digest.
  mkdirSync(join(d, "elsewhere"));
  writeFileSync(join(d, "elsewhere", N.sbom), "{}");
  failsWith(verify(["--checksums", checks(d), "--sbom", join(d, "elsewhere", N.sbom)]), `checksum mismatch for "${join(d, "elsewhere", N.sbom)}"`);
  writeFileSync(join(d, "elsewhere", N.sbom), readFileSync(join(d, N.sbom)));
  assert.match(verify(["--checksums", checks(d), "--sbom", join(d, "elsewhere", N.sbom)]).stdout, `sbom: verified via ${join(d, "elsewhere", N.sbom)}`);
  writeFileSync(join(d, "x_sbom.spdx.json"), readFileSync(join(d, N.sbom)));
  writeFileSync(checks(d), `${readFileSync(checks(d), "utf8")}${sha256(readFileSync(join(d, "x_sbom.spdx.json")))}  x_sbom.spdx.json\n`);
  failsWith(verify(["--checksums", checks(d)]), `several SBOMs listed in checksums file "${checks(d)}": "${N.sbom}", "x_sbom.spdx.json" (pick one with --sbom)`);
  // Step 3 runs before the signature (step 4): --sbom picks one, then the changed list's signature fails.
  failsWith(verify(["--checksums", checks(d), "--sbom", join(d, N.sbom)]), /^verify-release: signature ".*" does not match/);
});

test("provenance: a subject not in the checksums, a bad payload type, a wrong predicate, several files", () => {
  const prov = (d: string) => join(d, N.provenance);
  const [statement] = statements(readFileSync(prov(dir), "utf8"));
  const d = copy();
  const changed = structuredClone(statement);
  changed.subject[0].digest.sha256 = "ab".repeat(32);
  writeFileSync(prov(d), `${envelope(changed)}\n`);
  failsWith(verify(["--checksums", checks(d)]), `provenance "${prov(d)}" line 1: subject[0] "${statement.subject[0].name}" sha256 ${"ab".repeat(32)} is not listed in the checksums`);
  writeFileSync(prov(d), `${envelope(statement, "application/json")}\n`);
  failsWith(verify(["--checksums", checks(d)]), `provenance "${prov(d)}" line 1: payloadType must be "application/vnd.in-toto+json" (got "application/json")`);
  writeFileSync(prov(d), `${envelope({ ...statement, predicateType: "https://slsa.dev/provenance/v0.2" })}\n`);
  failsWith(verify(["--checksums", checks(d)]), `provenance "${prov(d)}" line 1: predicateType must be "https://slsa.dev/provenance/v1" (got "https://slsa.dev/provenance/v0.2")`);
  writeFileSync(prov(d), `${envelope({ ...statement, _type: "https://in-toto.io/Statement/v0.1" })}\n`);
  failsWith(verify(["--checksums", checks(d)]), `provenance "${prov(d)}" line 1: statement _type must be "https://in-toto.io/Statement/v1" (got "https://in-toto.io/Statement/v0.1")`);
  writeFileSync(prov(d), `${envelope({ ...statement, subject: [] })}\n`);
  failsWith(verify(["--checksums", checks(d)]), `provenance "${prov(d)}" line 1: subject must be a non-empty list`);
  writeFileSync(prov(d), "");
  failsWith(verify(["--checksums", checks(d)]), `provenance "${prov(d)}": is empty`);
  // JSON lines: a good envelope, a Sigstore bundle, a blank line, then a bad one on line 4.
  const good = envelope(statement);
  const bundle = JSON.stringify({ mediaType: "application/vnd.dev.sigstore.bundle.v0.3+json", dsseEnvelope: JSON.parse(good) });
  writeFileSync(prov(d), `${good}\n${bundle}\n\n${envelope(statement, "text/plain")}\n`);
  failsWith(verify(["--checksums", checks(d)]), `provenance "${prov(d)}" line 4: payloadType must be "application/vnd.in-toto+json" (got "text/plain")`);
  writeFileSync(prov(d), `${good}\n${bundle}\n`);
  assert.is(verify(["--checksums", checks(d)]).status, 0, "envelope and bundle lines both pass");
  // One Sigstore bundle, pretty-printed over several lines, is one document.
  writeFileSync(join(d, "bundle.json"), JSON.stringify(JSON.parse(bundle), null, 2));
  const r = verify(["--checksums", checks(d), "--provenance", join(d, "bundle.json"), "--require-provenance", "--json"]);
  assert.is(r.status, 0, r.stderr);
  assert.is(JSON.parse(r.stdout).provenance_file, join(d, "bundle.json"));
  // Auto-detection: two provenance files in the base dir.
  writeFileSync(join(d, "other_provenance.intoto.jsonl"), `${good}\n`);
  failsWith(verify(["--checksums", checks(d)]), /^verify-release: several provenance files: .* \(pick one with --provenance\)\n$/);
  assert.is(verify(["--checksums", checks(d), "--provenance", prov(d)]).status, 0);
  // Without a .intoto.jsonl, a single _provenance.attestation.json is found.
  rmSync(prov(d));
  rmSync(join(d, "other_provenance.intoto.jsonl"));
  writeFileSync(join(d, "spool_provenance.attestation.json"), JSON.stringify(JSON.parse(bundle), null, 2));
  assert.match(verify(["--checksums", checks(d)]).stdout, `provenance: verified via ${join(d, "spool_provenance.attestation.json")}`);
});

test("SBOM attestation: bad payload type, wrong predicate, subject without sha256; --sbom-attestation must exist", () => {
  const att = (d: string) => join(d, N.sbomAttestation);
  const [statement] = statements(readFileSync(att(dir), "utf8"));
  const d = copy();
  writeFileSync(att(d), `${envelope(statement, "application/vnd.in-toto+jsonl")}\n`);
  failsWith(verify(["--checksums", checks(d)]), `sbom-attestation "${att(d)}" line 1: payloadType must be "application/vnd.in-toto+json" (got "application/vnd.in-toto+jsonl")`);
  writeFileSync(att(d), `${envelope({ ...statement, predicateType: "https://slsa.dev/provenance/v1" })}\n`);
  failsWith(verify(["--checksums", checks(d)]), `sbom-attestation "${att(d)}" line 1: predicateType must be "https://spdx.dev/Document/v2.3" (got "https://slsa.dev/provenance/v1")`);
  writeFileSync(att(d), `${envelope({ ...statement, subject: [{ name: "x", digest: { sha512: "00" } }] })}\n`);
  failsWith(verify(["--checksums", checks(d)]), `sbom-attestation "${att(d)}" line 1: subject[0] "x" has no digest.sha256`);
  writeFileSync(att(d), `${JSON.stringify({ payloadType: "application/vnd.in-toto+json", payload: "%%%" })}\n`);
  failsWith(verify(["--checksums", checks(d)]), `sbom-attestation "${att(d)}" line 1: payload must be standard base64`);
  failsWith(verify(["--checksums", checks(d), "--sbom-attestation", join(d, "none.jsonl")]), `sbom-attestation "${join(d, "none.jsonl")}" cannot be read: no such file`);
  // Uppercase digests are accepted.
  const upper = structuredClone(statement);
  for (const s of upper.subject) s.digest.sha256 = s.digest.sha256.toUpperCase();
  writeFileSync(att(d), `${envelope(upper)}\n`);
  assert.is(verify(["--checksums", checks(d)]).status, 0);
});

test("usage errors exit 2: no --checksums (named), an unknown flag, a positional argument", () => {
  const none = verify([]);
  assert.is(none.status, 2);
  assert.match(none.stderr, /--checksums is required/);
  assert.is(none.stdout, "");
  const unknown = verify(["--checksums", checks(dir), "--no-such-flag"]);
  assert.is(unknown.status, 2);
  assert.match(unknown.stderr, /--no-such-flag/);
  const positional = verify(["--checksums", checks(dir), "extra.txt"]);
  assert.is(positional.status, 2);
  assert.match(positional.stderr, /unexpected argument "extra.txt"/);
  assert.is(positional.stdout, "");
  assert.is(verify(["--checksums", ""]).status, 2, "an empty value");
});

test.run();
