// `npm run release` twice from the same commit gives the same bytes (all but the provenance's
// run times); the key from a file or from the environment signs alike; --unsigned says so; bad
// keys and flags are refused before anything is built, and the key never reaches an output.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { N, release, statements, throwawayKey, verify, type Key } from "./release-build.js";

const test = suite("release reproducible");
const tmp = makeTempDir("release-repro");
const a = join(tmp.path, "a");
const b = join(tmp.path, "b");
let key: Key;

test.before(() => {
  key = throwawayKey(tmp.path);
  const first = release(["--out", a, "--key-file", key.file]);
  if (first.status !== 0) throw new Error(first.stderr);
  const second = release(["--out", b], { SPOOL_RELEASE_SIGNING_KEY: key.pem });
  if (second.status !== 0) throw new Error(second.stderr);
});
test.after(() => tmp.cleanup());

test("the same commit twice: every file byte-identical but the provenance, whose statements differ only in run times", () => {
  const files = readdirSync(a).sort();
  assert.equal(readdirSync(b).sort(), files);
  for (const f of files.filter((f) => f !== N.provenance)) assert.ok(readFileSync(join(a, f)).equals(readFileSync(join(b, f))), `${f} is byte-identical`);
  const [pa, pb] = [a, b].map((d) => statements(readFileSync(join(d, N.provenance), "utf8"))[0]);
  for (const p of [pa, pb]) {
    assert.match(p.predicate.runDetails.metadata.startedOn, /^\d{4}-\d\d-\d\dT/);
    delete p.predicate.runDetails.metadata;
  }
  assert.equal(pa, pb);
});

test("the dates come from the commit: the SBOM's created time is the commit time", () => {
  const epoch = Number(execFileSync("git", ["log", "-1", "--format=%ct", "HEAD"], { cwd: repoPath(), encoding: "utf8" }).trim());
  const sbom = JSON.parse(readFileSync(join(a, N.sbom), "utf8"));
  assert.is(sbom.creationInfo.created, new Date(epoch * 1000).toISOString().replace(/\.000Z$/, "Z"));
  assert.match(sbom.documentNamespace, /^https:\/\/spdx\.org\/spdxdocs\/spool-1\.2\.3-[0-9a-f]{32}$/);
  const [prov] = statements(readFileSync(join(a, N.provenance), "utf8"));
  assert.is(prov.predicate.buildDefinition.internalParameters.sourceDateEpoch, epoch);
  assert.is(prov.predicate.buildDefinition.resolvedDependencies[0].digest.gitCommit, execFileSync("git", ["rev-parse", "HEAD"], { cwd: repoPath(), encoding: "utf8" }).trim());
});

test("the private key is in no file of the release and in no output", () => {
  const body = key.pem.split("\n")[1];
  for (const d of [a, b]) for (const f of readdirSync(d)) assert.not.ok(readFileSync(join(d, f)).includes(body), f);
});

test("--unsigned: says so, writes no .sig or .pub.pem, the tarball is the same; verify passes, --require-signature refuses", () => {
  const out = join(tmp.path, "unsigned");
  const r = release(["--out", out, "--unsigned", "--skip-keep-binary"], { SPOOL_RELEASE_SIGNING_KEY: key.pem, SOURCE_DATE_EPOCH: "1700000000" });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /^unsigned: --unsigned given, so no spool_1\.2\.3_checksums\.txt\.sig or spool_1\.2\.3_checksums\.txt\.pub\.pem/m);
  assert.match(r.stdout, /^signature: not verified$/m);
  assert.equal(readdirSync(out).sort(), [N.tarball, N.checksums, N.provenance, N.sbomAttestation, N.sbom].sort());
  assert.ok(readFileSync(join(out, N.tarball)).equals(readFileSync(join(a, N.tarball))));
  assert.is(JSON.parse(readFileSync(join(out, N.sbom), "utf8")).creationInfo.created, "2023-11-14T22:13:20Z", "SOURCE_DATE_EPOCH, when set, wins");
  assert.is(readFileSync(join(out, N.checksums), "utf8").split("\n").length, 3, "the tarball and the SBOM");
  assert.is(verify(["--checksums", join(out, N.checksums)]).status, 0);
  assert.is(verify(["--checksums", join(out, N.checksums), "--require-signature"]).status, 1);
});

test("refused before building (exit 2): no key, a key that is not Ed25519 or not PEM, a bad version, a used --out, unknown flags", () => {
  const out = join(tmp.path, "refused");
  const refused = (args: string[], env: NodeJS.ProcessEnv, message: RegExp) => {
    const r = release(args, env);
    assert.is(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.not.ok(existsSync(out), "nothing was built");
    return r;
  };
  refused(["--out", out], {}, /^release: no signing key: give --key-file, set SPOOL_RELEASE_KEY_FILE or SPOOL_RELEASE_SIGNING_KEY, or pass --unsigned/);
  const secret = "-----BEGIN PRIVATE KEY-----\nnot-a-key-but-secret-text\n-----END PRIVATE KEY-----\n";
  const r = refused(["--out", out], { SPOOL_RELEASE_SIGNING_KEY: secret }, /^release: the \$SPOOL_RELEASE_SIGNING_KEY is not a PEM private key/);
  assert.not.ok(r.stderr.includes("not-a-key-but-secret-text"), "the key's text is never printed");
  const rsa = join(tmp.path, "rsa.pem");
  writeFileSync(rsa, execFileSync("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"], { stdio: ["ignore", "pipe", "ignore"] }));
  refused(["--out", out], { SPOOL_RELEASE_KEY_FILE: rsa }, /^release: the key file ".*rsa\.pem" is not an Ed25519 key \(rsa\)/);
  refused(["--out", out, "--key-file", join(tmp.path, "absent.pem")], {}, /^release: cannot read the key file ".*absent\.pem": ENOENT/);
  refused(["--out", out, "--key-file", key.file, "--unsigned"], {}, /--unsigned and --key-file exclude each other/);
  refused(["--out", out, "--unsigned", "--version", "v1.2.3"], {}, /--version must be X\.Y\.Z \(got "v1\.2\.3"/);
  refused(["--out", out, "--unsigned"], { SOURCE_DATE_EPOCH: "yesterday" }, /^release: SOURCE_DATE_EPOCH must be whole seconds since 1970 \(got "yesterday"\)/);
  refused(["--out", out, "--unsigned", "--key", "x"], {}, /^release: Unknown option '--key'/);
  refused(["--out", out, "--unsigned", "--keep-binary", join(tmp.path, "keep")], {}, /--keep-binary ".*keep" must be named keep-linux-amd64 or keep-linux-arm64/);
  mkdirSync(out);
  writeFileSync(join(out, "old.txt"), "an earlier release\n");
  const used = release(["--out", out, "--unsigned"]);
  assert.is(used.status, 2);
  assert.match(used.stderr, /--out ".*refused" is not empty/);
});

test.run();
