// The Keep CI action (keep/action/run.sh) installs Keep's single executable from a release built
// by `npm run release`, served by a local HTTPS server (certificates made for this run, trusted by
// curl through CURL_CA_BUNDLE), pinned to the SHA-256 that the release's verified checksums file
// lists for the runner's architecture. Keep's own server has its own CA (the action's ca input).
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath } from "../helpers/repo.js";
import { makeTlsMaterial, type TlsMaterial } from "../helpers/tls-material.js";
import { hostAsset, keepBinary } from "../keep/binary-cache.js";
import { EARLIER_MAP, fakeRunner, parseEnvFile, run } from "../keep/consumer-harness.js";
import { issue, makeFixture, put, serve, type Fixture, type Served } from "../keep/keep-helpers.js";
import { N, release, throwawayKey, verify, VERSION } from "./release-build.js";

const test = suite("keep action from a release");
let fx: Fixture;
let keepServer: Served;
let assets: Server;
let stranger: Server;
let tls: TlsMaterial;
let base: string;
let token: string;
let dir: string;
const requests: string[] = [];
const served = new Map<string, string>(); // URL path → file served for it (to serve a wrong file)
const SECRET = "released-action-value";

test.before(async () => {
  fx = await makeFixture("release-action");
  // Both architectures' executables in one release, as the release workflow makes it: the host's,
  // and a stand-in for the other (the host's with trailing bytes, so it runs here too).
  const bins = join(fx.dir, "bins");
  mkdirSync(bins);
  const other = hostAsset === "keep-linux-amd64" ? "keep-linux-arm64" : "keep-linux-amd64";
  copyFileSync(keepBinary(), join(bins, hostAsset));
  writeFileSync(join(bins, other), Buffer.concat([readFileSync(keepBinary()), Buffer.from("\0other-arch\0")]), { mode: 0o755 });
  dir = join(fx.dir, "release");
  const key = throwawayKey(fx.dir);
  const r = release(["--out", dir, "--key-file", key.file, "--keep-binary", join(bins, "keep-linux-amd64"), "--keep-binary", join(bins, "keep-linux-arm64")]);
  if (r.status !== 0) throw new Error(r.stderr);
  put(fx, "app/ci/API_KEY", SECRET);
  token = issue(fx, "ci-app");
  keepServer = await serve(fx);
  tls = makeTlsMaterial();
  const pem = (name: Parameters<TlsMaterial["file"]>[0]) => readFileSync(tls.file(name));
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    requests.push(req.url ?? "");
    const m = /^\/releases\/download\/v(\d+\.\d+\.\d+)\/([\w.-]+)$/.exec(req.url ?? "");
    const name = m && m[1] === VERSION ? served.get(m[2]) ?? m[2] : undefined;
    if (!name || !readdirSync(dir).includes(name)) {
      res.writeHead(404).end("not found");
      return;
    }
    const body = readFileSync(join(dir, name));
    res.writeHead(200, { "Content-Length": body.length }).end(body);
  };
  assets = createServer({ cert: pem("server.pem"), key: pem("server.key") }, handler);
  stranger = createServer({ cert: pem("stranger.pem"), key: pem("stranger.key") }, handler);
  for (const server of [assets, stranger]) await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  base = baseOf(assets);
});
const baseOf = (server: Server) => `https://localhost:${(server.address() as { port: number }).port}/releases/download`;
test.after(async () => {
  assets.close();
  stranger.close();
  tls.cleanup();
  await keepServer.stop();
  fx.cleanup();
});

/** The SHA-256 the release's checksums file lists for `asset`, after verifying the release. */
function listedSha(asset: string): string {
  const v = verify(["--checksums", join(dir, N.checksums), "--require-signature", "--require-sbom", "--require-provenance"]);
  assert.is(v.status, 0, v.stderr);
  const line = readFileSync(join(dir, N.checksums), "utf8").split("\n").find((l) => l.endsWith(`  ${asset}`));
  assert.ok(line, `${asset} is listed`);
  return line!.slice(0, 64);
}

async function action(arch: "X64" | "ARM64", releaseBase = base) {
  const runner = fakeRunner(fx.dir, `${arch}-${requests.length}`, arch);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GITHUB_ENV: runner.githubEnv,
    RUNNER_TEMP: runner.runnerTemp,
    RUNNER_ARCH: arch,
    CURL_CA_BUNDLE: tls.file("ca.pem"),
    KEEP_RELEASE_BASE: releaseBase,
    INPUT_URL: keepServer.url.replace("127.0.0.1", "localhost"),
    INPUT_CA: fx.certs.caPem,
    INPUT_TOKEN: token,
    INPUT_PATHS: "app/ci/API_KEY",
    INPUT_VERSION: `v${VERSION}`,
    INPUT_SHA256_AMD64: listedSha("keep-linux-amd64"),
    INPUT_SHA256_ARM64: listedSha("keep-linux-arm64"),
    INPUT_BINARY: "",
  };
  const r = await run("bash", [repoPath("keep", "action", "run.sh")], { env });
  return { ...r, runner };
}

test("each architecture installs its own asset at the checksum the release lists, runs it, and the job gets the secret", async () => {
  for (const [arch, asset] of [["X64", "keep-linux-amd64"], ["ARM64", "keep-linux-arm64"]] as const) {
    requests.length = 0;
    const r = await action(arch);
    assert.is(r.status, 0, r.stderr);
    assert.equal(requests, [`/releases/download/v${VERSION}/${asset}`]);
    assert.equal([...parseEnvFile(readFileSync(r.runner.githubEnv, "utf8"))], [...EARLIER_MAP, ["API_KEY", SECRET]]);
    assert.equal(readdirSync(r.runner.runnerTemp), [], "nothing left in RUNNER_TEMP");
  }
});

test("a served file that is not the released one fails the step; nothing written", async () => {
  served.set(hostAsset, N.tarball);
  try {
    const r = await action(hostAsset === "keep-linux-amd64" ? "X64" : "ARM64");
    assert.ok(r.status !== 0);
    const got = createHash("sha256").update(readFileSync(join(dir, N.tarball))).digest("hex");
    assert.match(r.stderr, `SHA-256 mismatch for ${hostAsset} v${VERSION} (expected ${listedSha(hostAsset)}, got ${got}); the file was deleted`);
    assert.is(readFileSync(r.runner.githubEnv, "utf8"), r.runner.earlier);
  } finally {
    served.clear();
  }
});

test("a release server whose certificate the CA bundle does not vouch for is refused before anything runs", async () => {
  requests.length = 0;
  const r = await action(hostAsset === "keep-linux-amd64" ? "X64" : "ARM64", baseOf(stranger));
  assert.ok(r.status !== 0);
  assert.match(r.stderr, `downloading ${hostAsset} v${VERSION} failed`);
  assert.equal(requests, [], "no request got through the TLS handshake");
  assert.is(readFileSync(r.runner.githubEnv, "utf8"), r.runner.earlier);
});

test.run();
