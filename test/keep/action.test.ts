// The CI action: `keep/action/run.sh` run by bash with a fake runner against a local HTTPS release
// server (trusted through CURL_CA_BUNDLE) serving the single executable built from this tree, and
// the real `keep serve`. Also the action's shape, shellcheck, and the single executable itself.
import { execFileSync, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath } from "../helpers/repo.js";
import { reportSkipped } from "../helpers/skip.js";
import { hostAsset, keepBinary } from "./binary-cache.js";
import { assertNoLeak, EARLIER_MAP, expectedMasks, fakeRunner, parseEnvFile, run, type FakeRunner, type Run } from "./consumer-harness.js";
import { issue, makeFixture, put, serve, type Fixture, type Served } from "./keep-helpers.js";

const test = suite("keep CI action");
const runSh = repoPath("keep", "action", "run.sh");
let fx: Fixture;
let srv: Served;
let release: Server;
let releaseBase: string;
let requests: string[] = [];
let token: string;
let binary: string;
const assets = new Map<string, Buffer>();
const sha = new Map<string, string>();
let n = 0;
const shims = join(process.env.TMPDIR ?? "/tmp", `spool-keep-action-shims-${process.pid}`);
const shimLog = `${shims}.log`;
const VALUES = { API_KEY: "action-api-key-value", MULTI_LINE: "multi line one\nmulti line two\n" };

test.before(async () => {
  binary = keepBinary();
  fx = await makeFixture("action");
  for (const [name, value] of Object.entries(VALUES)) put(fx, `app/ci/${name}`, value);
  token = issue(fx, "ci-app");
  srv = await serve(fx, ["--enable-export"]);
  const host = readFileSync(binary);
  // Two distinct assets (the arm64 one is the host binary with trailing bytes, so it runs here
  // too) prove each architecture gets its own asset and its own checksum.
  assets.set(hostAsset === "keep-linux-amd64" ? "keep-linux-amd64" : "keep-linux-arm64", host);
  assets.set(hostAsset === "keep-linux-amd64" ? "keep-linux-arm64" : "keep-linux-amd64", Buffer.concat([host, Buffer.from("\0arm64-test-padding\0")]));
  for (const [name, bytes] of assets) sha.set(name, createHash("sha256").update(bytes).digest("hex"));
  release = createServer({ cert: fx.certs.certPem, key: fx.certs.keyPem }, (req, res) => {
    requests.push(req.url ?? "");
    const m = /^\/releases\/download\/(v[0-9.]+)\/(keep-linux-\w+)$/.exec(req.url ?? "");
    const body = m && m[1] === "v1.2.3" ? assets.get(m[2]) : undefined;
    if (!body) {
      res.writeHead(404).end("not found");
      return;
    }
    res.writeHead(200, { "Content-Length": body.length }).end(body);
  });
  await new Promise<void>((done) => release.listen(0, "127.0.0.1", done));
  releaseBase = `https://localhost:${(release.address() as { port: number }).port}/releases/download`;
  // Shims first on PATH log the arguments of every external command run.sh could write a token with.
  mkdirSync(shims, { recursive: true });
  for (const name of ["printf", "echo", "cat", "tee", "cp", "install", "dd", "curl", "sha256sum", "chmod", "mktemp", "rm", "env", "base64"]) {
    const real = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).stdout.trim();
    if (!real.startsWith("/")) continue;
    writeFileSync(join(shims, name), `#!/bin/sh\nprintf '%s\\n' "${name} $*" >> "${shimLog}"\nexec "${real}" "$@"\n`, { mode: 0o755 });
  }
});
test.after(async () => {
  release.close();
  rmSync(shims, { recursive: true, force: true });
  rmSync(shimLog, { force: true });
  await srv.stop();
  fx.cleanup();
});

interface ActionRun extends Run {
  runner: FakeRunner;
  argvHeldToken: boolean;
  /** External commands run through PATH (the shims' log), e.g. "chmod 0700 /…/keep-linux-amd64". */
  commands: string[];
  /** Every execve of the run, from strace when it is installed (else undefined). */
  execs: string | undefined;
}

const hasStrace = !spawnSync("strace", ["-V"]).error;

/** Runs run.sh like the runner does, scanning every process's argv for the token meanwhile. */
async function action(inputs: Record<string, string>, opts: { arch?: string; extraEnv?: NodeJS.ProcessEnv } = {}): Promise<ActionRun> {
  const runner = fakeRunner(fx.dir, `a${n++}`, opts.arch ?? (process.arch === "arm64" ? "ARM64" : "X64"));
  const env: NodeJS.ProcessEnv = { PATH: `${shims}:${process.env.PATH}`, HOME: process.env.HOME, GITHUB_ENV: runner.githubEnv, RUNNER_TEMP: runner.runnerTemp, RUNNER_ARCH: runner.env.RUNNER_ARCH, CURL_CA_BUNDLE: fx.caFile, KEEP_RELEASE_BASE: releaseBase, ...opts.extraEnv };
  const all = { INPUT_URL: srv.url.replace("127.0.0.1", "localhost"), INPUT_CA: fx.certs.caPem, INPUT_TOKEN: token, INPUT_PATHS: "app/ci/API_KEY\n  app/ci/MULTI_LINE ", INPUT_VERSION: "v1.2.3", INPUT_SHA256_AMD64: sha.get("keep-linux-amd64")!, INPUT_SHA256_ARM64: sha.get("keep-linux-arm64")!, INPUT_BINARY: "", ...inputs };
  let argvHeldToken = false;
  let timer: NodeJS.Timeout | undefined;
  const scan = (): void => {
    for (const pid of readdirSync("/proc")) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if (readFileSync(`/proc/${pid}/cmdline`).includes(token)) argvHeldToken = true;
      } catch {
        /* gone */
      }
    }
  };
  rmSync(shimLog, { force: true });
  const straceLog = join(fx.dir, `strace-${n}.log`);
  // With strace, every execve's arguments are recorded, so even a command run by absolute path
  // that held the token for a microsecond is seen; without it, the /proc scan and shims remain.
  const [file, argv] = hasStrace ? ["strace", ["-f", "-qq", "-e", "trace=execve", "-s", "65535", "-o", straceLog, "bash", runSh]] : ["bash", [runSh]];
  const r = await run(file, argv, {
    env: { ...env, ...all },
    started: (_child: ChildProcess) => {
      timer = setInterval(scan, 5);
    },
  });
  clearInterval(timer);
  scan();
  assertNoLeak(r, [...Object.values(VALUES), token]);
  const commands = existsSync(shimLog) ? readFileSync(shimLog, "utf8").split("\n").filter(Boolean) : [];
  if (commands.some((c) => c.includes(token))) argvHeldToken = true;
  const execs = hasStrace ? readFileSync(straceLog, "utf8") : undefined;
  if (execs?.includes(token)) argvHeldToken = true;
  return { ...r, runner, argvHeldToken, commands, execs };
}

function assertDelivered(r: ActionRun): void {
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stderr, "", "nothing on stderr (no SEA warning either)");
  assert.equal([...parseEnvFile(readFileSync(r.runner.githubEnv, "utf8"))], [...EARLIER_MAP, ...Object.entries(VALUES)]);
  assert.equal(r.stdout.split("\n").slice(0, -1), expectedMasks(Object.values(VALUES)));
  assert.not.ok(r.argvHeldToken, "no process's argv held the token");
  assert.equal(readdirSync(r.runner.runnerTemp), [], "token, CA and binary are removed afterwards");
  const sum = r.commands.findIndex((c) => c.startsWith("sha256sum "));
  const chmod = r.commands.findIndex((c) => c.startsWith("chmod "));
  if (chmod >= 0) assert.ok(sum >= 0 && sum < chmod, "SHA-256 verified before chmod");
}

function executables(dir: string): string[] {
  const found: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) found.push(...executables(p));
    else if (statSync(p).mode & 0o111) found.push(p);
  }
  return found;
}

function assertFailedUntouched(r: ActionRun, pattern: RegExp): void {
  assert.ok(r.status !== 0, "the step fails");
  assert.match(r.stderr, pattern, r.stderr);
  assert.is(readFileSync(r.runner.githubEnv, "utf8"), r.runner.earlier, "env file untouched");
  assert.equal(executables(r.runner.runnerTemp), [], "no executable file left");
}

test("the single executable: version, fetch and exec only, no server, no SQLite", () => {
  assert.is(execFileSync(binary, ["version"], { encoding: "utf8" }), `${JSON.parse(readFileSync(repoPath("package.json"), "utf8")).version}\n`);
  for (const cmd of ["serve", "put", "ls"]) assert.is(spawnSync(binary, [cmd, "--dev"]).status, 2, `${cmd} is not in the executable`);
  const bytes = readFileSync(binary);
  assert.not.ok(bytes.includes("better-sqlite3") || bytes.includes("audit_unavailable") || bytes.includes("CREATE TABLE"), "no store or server code");
  assert.ok(bytes.includes("::add-mask::"), "the consumer is in it");
});

test("right checksum: downloads the host's asset, runs it, the env file gets the secrets; token file never in argv", async () => {
  requests = [];
  const r = await action({});
  assertDelivered(r);
  assert.equal(requests, [`/releases/download/v1.2.3/${hostAsset}`]);
});

test("X64 and ARM64 pick their own asset and checksum; any other RUNNER_ARCH fails before downloading", async () => {
  for (const [arch, asset] of [["X64", "keep-linux-amd64"], ["ARM64", "keep-linux-arm64"]]) {
    requests = [];
    const other = asset === "keep-linux-amd64" ? "INPUT_SHA256_ARM64" : "INPUT_SHA256_AMD64";
    const r = await action({ [other]: "0".repeat(64) }, { arch });
    assertDelivered(r);
    assert.equal(requests, [`/releases/download/v1.2.3/${asset}`], arch);
  }
  for (const arch of ["X86", "ARM", "x64", ""]) {
    requests = [];
    const r = await action({}, { arch });
    assertFailedUntouched(r, /unsupported RUNNER_ARCH/);
    assert.equal(requests, []);
  }
});

test("a wrong checksum deletes the download, never runs it, and fails", async () => {
  const r = await action({ INPUT_SHA256_AMD64: "f".repeat(64), INPUT_SHA256_ARM64: "f".repeat(64) });
  assertFailedUntouched(r, /SHA-256 mismatch/);
  assert.is(r.stdout, "", "nothing ran: no mask line");
  assert.ok(r.commands.some((c) => c.startsWith("curl ")), "it was downloaded");
  assert.not.ok(r.commands.some((c) => c.startsWith("chmod ")), "never made executable");
  if (r.execs !== undefined) assert.not.match(r.execs, /execve\("[^"]*keep\.[^"]*\/keep-linux-/, "never executed");
  assert.equal(readdirSync(r.runner.runnerTemp), [], "no file left at all");
  const bad = await action({ INPUT_SHA256_AMD64: "not-hex", INPUT_SHA256_ARM64: "not-hex" });
  assertFailedUntouched(bad, /64 hex/);
});

test("keep fetch's own failure (403, a collision-free but denied path) fails the step with its status; nothing written", async () => {
  const r = await action({ INPUT_PATHS: "app/ci/API_KEY secret/X" });
  assert.is(r.status, 1);
  assertFailedUntouched(r, /keep fetch: .*403 forbidden/);
  assert.is(r.stdout, "");
});

test("version must be vX.Y.Z; a missing asset, an http:// base or an untrusted server fails", async () => {
  for (const version of ["1.2.3", "v1.2", "v1.2.3-rc1", "latest", "v1.2.3/../x", ""]) {
    requests = [];
    assertFailedUntouched(await action({ INPUT_VERSION: version }), /version must be vX\.Y\.Z/);
    assert.equal(requests, []);
  }
  assertFailedUntouched(await action({ INPUT_VERSION: "v9.9.9" }), /downloading/);
  assertFailedUntouched(await action({}, { extraEnv: { KEEP_RELEASE_BASE: releaseBase.replace("https", "http") } }), /https/);
  writeFileSync(join(fx.dir, "rogue-ca.pem"), fx.rogue.caPem);
  assertFailedUntouched(await action({}, { extraEnv: { CURL_CA_BUNDLE: join(fx.dir, "rogue-ca.pem") } }), /downloading/);
});

test("binary set (a path, or a name on PATH): no download, version and checksums ignored; the token file is 0600", async () => {
  const bin = join(fx.dir, "bin");
  mkdirSync(bin, { recursive: true });
  const record = join(fx.dir, "record");
  // Records the token file's mode and content, then runs the real executable.
  writeFileSync(join(bin, "keep-recording"), `#!/bin/sh\nfor a in "$@"; do if [ "$prev" = --token-file ]; then stat -c %a "$a" > "${record}.mode"; cp "$a" "${record}.token"; fi; prev="$a"; done\nsleep 0.2\nexec "${binary}" "$@"\n`);
  chmodSync(join(bin, "keep-recording"), 0o755);
  for (const given of [join(bin, "keep-recording"), "keep-recording"]) {
    requests = [];
    const r = await action({ INPUT_BINARY: given, INPUT_VERSION: "garbage", INPUT_SHA256_AMD64: "", INPUT_SHA256_ARM64: "" }, { extraEnv: { PATH: `${shims}:${bin}:${process.env.PATH}` } });
    assertDelivered(r);
    assert.equal(requests, [], "nothing downloaded");
    assert.is(readFileSync(`${record}.mode`, "utf8").trim(), "600");
    assert.is(readFileSync(`${record}.token`, "utf8"), `${token}\n`);
  }
  assertFailedUntouched(await action({ INPUT_BINARY: "no-such-keep-binary" }), /not on PATH/);
});

test("action.yml: composite, one bash step running run.sh, every input only through env:, no ${{ }} in run:", () => {
  const yml = readFileSync(repoPath("keep", "action", "action.yml"), "utf8");
  assert.match(yml, /^runs:\n {2}using: composite\n {2}steps:\n {4}- shell: bash\n {6}run: bash "\$GITHUB_ACTION_PATH\/run\.sh"\n {6}env:\n/m);
  assert.is((yml.match(/^\s*- /gm) ?? []).length, 1, "a single step");
  const inputs = ["url", "ca", "token", "paths", "version", "sha256-amd64", "sha256-arm64", "binary"];
  for (const name of inputs) {
    assert.match(yml, new RegExp(`^  ${name}:\\n`, "m"), `input ${name}`);
    assert.ok(yml.includes(`        INPUT_${name.toUpperCase().replace(/-/g, "_")}: \${{ inputs.${name} }}\n`), `env for ${name}`);
  }
  assert.is((yml.match(/\$\{\{/g) ?? []).length, inputs.length, "expressions only in env:");
  const script = readFileSync(runSh, "utf8");
  assert.not.ok(script.includes("${{"), "no expression in run.sh");
  assert.match(script, /^set -euo pipefail\numask 077$/m);
});

test("run.sh is shellcheck-clean", () => {
  if (spawnSync("shellcheck", ["--version"]).error) return reportSkipped("keep CI action: shellcheck", 1, "shellcheck is not installed");
  const r = spawnSync("shellcheck", ["--shell=bash", runSh], { encoding: "utf8" });
  assert.is(r.status, 0, r.stdout + r.stderr);
});

test.run();
