// `keep fetch` (route A) with real processes, real files and real HTTPS against `keep serve`: a fake
// runner's env file parsed with the runner's grammar gives the exact name→value map; stdout holds
// only mask lines, covering every line of every value, all flushed before the env file is touched;
// every failure exits 1 with an empty stdout, the env file untouched and nothing read.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { setTimeout as delay } from "node:timers/promises";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { formatAssignments, maskLines } from "../../keep/consumer/actions-env.js";
import { reportSkipped } from "../helpers/skip.js";
import { assertNoLeak, EARLIER_MAP, expectedMasks, fakeRunner, parseEnvFile, run, runKeep, type FakeRunner } from "./consumer-harness.js";
import { issue, keepBin, makeFixture, put, serve, type Fixture, type Served } from "./keep-helpers.js";

const test = suite("keep fetch");
let fx: Fixture;
let withExport: Served;
let plain: Served;
let full: Served;
let tokenFile: string;
let readerFile: string;
let nobodyFile: string;
let n = 0;

const HEX = "0123456789abcdef0123456789abcdef";
const CI: Record<string, string> = {
  PLAIN: "plain-value-1",
  SPACED: "  spaced value  ",
  HAS_EOF: "first line\nEOF\nlast line",
  DELIM_LIKE: `ghadelimiter_1\n${HEX}\n<<EOF\nEOF`,
  OTHER_LINES: "harmless\nOTHER=1\nGITHUB_PATH=/tmp/evil\nBASH_ENV<<X",
  PERCENT: "a%0Ab%25c%0D",
  CRLF: "crlf-one\r\ncrlf-two\r\n",
  CR_ONLY: "cr-one\rcr-two",
  TRAILING: "trailing-one\n\n\n",
  EMPTY_LINES: "\n\nmiddle-line\n\n",
  UNICODE: "ünïcödé-😀\nsecond",
  EQUALS: "k=v<<not-a-heredoc",
};
const ALL_VALUES = () => [...Object.values(CI), "clash-value-a", "clash-value-b", "bad-name-value", "reserved-value-1", "reserved-value-2", "reserved-value-3", "reserved-value-4", "nul-value-5", "other-prefix-value"];

test.before(async () => {
  fx = await makeFixture("fetch");
  for (const [name, value] of Object.entries(CI)) put(fx, `app/ci/${name}`, value);
  put(fx, "app/other/OTHER_PREFIX", "other-prefix-value");
  put(fx, "app/clash/a/KEY", "clash-value-a");
  put(fx, "app/clash/b/KEY", "clash-value-b");
  put(fx, "app/bad/1BAD", "bad-name-value");
  put(fx, "app/res1/GITHUB_TOKEN", "reserved-value-1");
  put(fx, "app/res2/runner_temp", "reserved-value-2");
  put(fx, "app/res3/NODE_OPTIONS", "reserved-value-3");
  put(fx, "app/res4/BASH_ENV", "reserved-value-4");
  put(fx, "app/nul/ZNUL", "nul-value-5\u0000tail");
  put(fx, "app/big/BIG", Array.from({ length: 60_000 }, (_, i) => `big-line-${i}`).join("\n"));
  put(fx, "secret/X", "forbidden-value");
  tokenFile = join(fx.dir, "ci.token");
  issue(fx, "ci-app", tokenFile);
  readerFile = join(fx.dir, "reader.token");
  issue(fx, "reader", readerFile);
  nobodyFile = join(fx.dir, "nobody.token");
  issue(fx, "nobody", nobodyFile);
  withExport = await serve(fx, ["--enable-export", "--audit-log", join(fx.dir, "export-audit.log")]);
  plain = await serve(fx, ["--audit-log", join(fx.dir, "plain-audit.log")]);
  full = await serve(fx, ["--enable-export", "--audit-log", "/dev/full"]);
});
test.after(async () => {
  await Promise.all([withExport.stop(), plain.stop(), full.stop()]);
  fx.cleanup();
});

const audit = (file: string): { op: string; path: string }[] => {
  try {
    return readFileSync(join(fx.dir, file), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    return [];
  }
};
const args = (s: { url: string }, paths: string[], r: FakeRunner, token = tokenFile): string[] => ["fetch", "--url", s.url.replace("127.0.0.1", "localhost"), "--ca", fx.caFile, "--token-file", token, ...paths.flatMap((p) => ["--path", p]), "--format", "actions-env", "--github-env", r.githubEnv];
const runner = () => fakeRunner(fx.dir, `r${n++}`);

async function fetchOk(s: Served, paths: string[], expected: Record<string, string>): Promise<{ r: FakeRunner; text: string; stdout: string }> {
  const r = runner();
  const res = await runKeep(args(s, paths, r), { env: r.env });
  assertNoLeak(res, ALL_VALUES());
  assert.is(res.stderr, "", "nothing on stderr on success");
  assert.is(res.status, 0, res.stderr);
  const text = readFileSync(r.githubEnv, "utf8");
  assert.ok(text.startsWith(`${r.earlier}\n`), "the earlier content is kept, with the missing final LF added");
  assert.equal([...parseEnvFile(text)], [...EARLIER_MAP, ...Object.entries(expected)]);
  const masks = res.stdout.split("\n").slice(0, -1);
  assert.equal(new Set(masks), new Set(expectedMasks(Object.values(expected))), "one mask per non-empty line of every value, escaped");
  return { r, text, stdout: res.stdout };
}

test("actions-env: the exact name→value map through the runner's grammar, every line masked (export)", async () => {
  const before = audit("export-audit.log").length;
  const { text, stdout } = await fetchOk(withExport, ["app/ci/"], Object.fromEntries(Object.entries(CI).sort(([a], [b]) => (`app/ci/${a}` < `app/ci/${b}` ? -1 : 1))));
  const lines = audit("export-audit.log").slice(before);
  assert.is(lines.length, Object.keys(CI).length, "each secret read exactly once");
  assert.ok(lines.every((l) => l.op === "export"));
  assert.ok(stdout.includes("::add-mask::a%250Ab%2525c%250D\n"), "% escaped as %25");
  assert.ok(stdout.includes("::add-mask::crlf-one\n") && stdout.includes("::add-mask::cr-one\n::add-mask::cr-two\n"), "split on CRLF and CR");
  assert.ok(text.includes("PLAIN=plain-value-1\n") && text.includes("EQUALS=k=v<<not-a-heredoc\n"), "single-line values as NAME=value");
  const delimiters = [...text.slice(fx.dir.length ? 0 : 0).matchAll(/^[A-Z_]+<<([0-9a-f]+)$/gm)].map((m) => m[1]);
  assert.is(delimiters.length, 8, "every value with CR or LF as a heredoc");
  assert.ok(delimiters.every((d) => /^[0-9a-f]{32}$/.test(d)), "delimiters are 32 lowercase hex");
  assert.is(new Set(delimiters).size, delimiters.length, "a fresh delimiter per assignment");
});

test("actions-env: without export, one GET per path (each read once); explicit paths and prefixes, duplicates once", async () => {
  const before = audit("plain-audit.log").length;
  await fetchOk(plain, ["app/ci/PLAIN", "app/other/", "app/ci/PLAIN", "app/ci/CRLF", "app/other/"], { PLAIN: CI.PLAIN, OTHER_PREFIX: "other-prefix-value", CRLF: CI.CRLF });
  const lines = audit("plain-audit.log").slice(before);
  assert.equal(lines.map((l) => `${l.op} ${l.path}`).sort(), ["read app/ci/CRLF", "read app/ci/PLAIN", "read app/other/OTHER_PREFIX"]);
});

test("a forced delimiter collision redraws (injected random source); the file parses back exactly", () => {
  const value = `one\n${HEX}\ntwo`;
  const draws = [HEX, "not-hex", "fedcba9876543210fedcba9876543210"];
  const text = formatAssignments([{ name: "V", value }], () => draws.shift() as string);
  assert.is(text, `V<<fedcba9876543210fedcba9876543210\n${value}\nfedcba9876543210fedcba9876543210\n`);
  assert.equal([...parseEnvFile(text)], [["V", value]]);
  // Substring occurrence counts too, and every value of the corpus round-trips with the real source.
  const partial = formatAssignments([{ name: "W", value: `x${HEX}y\n` }], (() => { const d = [HEX, "ffffffffffffffffffffffffffffffff"]; return () => d.shift() as string; })());
  assert.ok(partial.startsWith("W<<ffffffffffffffffffffffffffffffff\n"));
  const all = Object.entries(CI).map(([name, value]) => ({ name, value }));
  assert.equal([...parseEnvFile(formatAssignments(all))], Object.entries(CI));
  assert.is(maskLines(["a\r\nb\rc\n\nd%"]), "::add-mask::a\n::add-mask::b\n::add-mask::c\n::add-mask::d%25\n");
});

test("ordering: all mask lines are flushed before the env file is touched (stdout held unread)", async () => {
  const r = runner();
  const before = statSync(r.githubEnv);
  const child = spawn(process.execPath, [keepBin, ...args(withExport, ["app/big/BIG", "app/ci/PLAIN"], r)], { env: r.env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c) => (stderr += c));
  // The mask lines (~900 KB) exceed the pipe: keep blocks on stdout while nobody reads it.
  await delay(1500);
  const during = statSync(r.githubEnv);
  assert.is(during.size, before.size, "env file untouched while mask lines are still unread");
  assert.is(during.mtimeMs, before.mtimeMs);
  let stdout = "";
  child.stdout.on("data", (c) => (stdout += c));
  const status = await new Promise((done) => child.on("close", done));
  assert.is(status, 0, stderr);
  assert.ok(stdout.startsWith("::add-mask::big-line-0\n"), "the first byte of stdout is a mask line");
  assert.is(stdout.split("\n").length - 1, 60_001);
  assert.is(parseEnvFile(readFileSync(r.githubEnv, "utf8")).get("PLAIN"), CI.PLAIN);
});

test("syscalls (strace, when installed): mask writes, then open the env file, one write, fsync", async () => {
  if (spawnSync("strace", ["-V"]).error) return reportSkipped("keep fetch: syscall order", 1, "strace is not installed");
  const r = runner();
  const log = join(fx.dir, "fetch-strace.log");
  const res = await run("strace", ["-f", "-qq", "-e", "trace=openat,write,writev,pwrite64,fsync,fdatasync", "-s", "0", "-o", log, process.execPath, keepBin, ...args(withExport, ["app/ci/"], r)], { env: r.env });
  assert.is(res.status, 0, res.stderr);
  const lines = readFileSync(log, "utf8").split("\n");
  const open = lines.findIndex((l) => l.includes(`openat(AT_FDCWD, "${r.githubEnv}"`));
  assert.ok(open > 0, "the env file is opened");
  const fd = /= (\d+)$/.exec(lines[open])?.[1];
  assert.ok(fd, lines[open]);
  const maskWrites = lines.map((l, i) => [l, i] as const).filter(([l]) => /\b(write|writev)\(1,/.test(l));
  assert.ok(maskWrites.length > 0 && maskWrites.every(([, i]) => i < open), "every stdout write before the env file is opened");
  const after = lines.slice(open + 1);
  const fileWrites = after.filter((l) => new RegExp(`\\b(write|writev|pwrite64)\\(${fd},`).test(l));
  assert.is(fileWrites.length, 1, "one write to the env file");
  const writeAt = after.findIndex((l) => new RegExp(`\\b(write|writev|pwrite64)\\(${fd},`).test(l));
  const syncAt = after.findIndex((l) => new RegExp(`\\b(fsync|fdatasync)\\(${fd}`).test(l));
  assert.ok(syncAt > writeAt, "fsync after the write");
});

async function refused(s: Served | { url: string }, paths: string[], pattern: RegExp, opts: { token?: string; extra?: string[]; auditFile?: string; replace?: (a: string[]) => string[] } = {}): Promise<void> {
  const r = runner();
  const original = readFileSync(r.githubEnv);
  const auditBefore = opts.auditFile ? audit(opts.auditFile).length : 0;
  let a = [...args(s, paths, r, opts.token), ...(opts.extra ?? [])];
  if (opts.replace) a = opts.replace(a);
  const res = await runKeep(a, { env: r.env });
  assertNoLeak(res, ALL_VALUES());
  assert.is(res.status, 1, `${paths.join(" ")}: ${res.stderr}`);
  assert.is(res.stdout, "", "empty stdout");
  assert.match(res.stderr, /^keep fetch: /);
  assert.match(res.stderr, pattern, res.stderr);
  assert.ok(readFileSync(r.githubEnv).equals(original), "env file untouched");
  if (opts.auditFile) assert.is(audit(opts.auditFile).length, auditBefore, "nothing read");
  for (const secret of ALL_VALUES()) assert.not.ok(res.stderr.includes(secret));
}

test("refused sets: bad name, collision (both paths named), empty listing, runner-reserved names — nothing read", async () => {
  for (const s of [withExport, plain]) {
    const auditFile = s === withExport ? "export-audit.log" : "plain-audit.log";
    await refused(s, ["app/ci/PLAIN", "app/bad/"], /app\/bad\/1BAD.*1BAD/, { auditFile });
    await refused(s, ["app/clash/"], /app\/clash\/a\/KEY and app\/clash\/b\/KEY both give the name KEY/, { auditFile });
    await refused(s, ["app/ci/PLAIN", "app/nothing-here/"], /app\/nothing-here\/.*empty/, { auditFile });
    await refused(s, ["app/ci/"], /empty/, { auditFile, token: nobodyFile });
    await refused(s, ["app/ci/PLAIN", "app/res1/GITHUB_TOKEN"], /app\/res1\/GITHUB_TOKEN.*GITHUB_TOKEN/, { auditFile });
    await refused(s, ["app/res2/"], /runner_temp/, { auditFile });
    await refused(s, ["app/res3/NODE_OPTIONS"], /NODE_OPTIONS/, { auditFile });
    await refused(s, ["app/res4/BASH_ENV"], /BASH_ENV.*would change how every later step runs programs/, { auditFile });
    // Known only once read: refused before anything is printed or written, by path and name.
    await refused(s, ["app/nul/ZNUL"], /app\/nul\/ZNUL \(ZNUL\) contains a NUL byte/);
  }
});

test("service failures: unreachable, wrong CA, 401, 403, 404, 503 — exit 1, nothing written", async () => {
  await refused({ url: "https://127.0.0.1:9" }, ["app/ci/PLAIN"], /ECONNREFUSED/);
  const rogueCa = join(fx.dir, "rogue-ca.pem");
  writeFileSync(rogueCa, fx.rogue.caPem);
  await refused(withExport, ["app/ci/PLAIN"], /CERT_SIGNATURE_FAILURE|UNABLE_TO_VERIFY|SELF_SIGNED/, { replace: (a) => a.map((x) => (x === fx.caFile ? rogueCa : x)) });
  const badToken = join(fx.dir, "bad.token");
  writeFileSync(badToken, "not-a-real-token\n");
  await refused(withExport, ["app/ci/PLAIN"], /401 unauthorized/, { token: badToken });
  await refused(withExport, ["app/ci/PLAIN", "secret/X"], /403 forbidden/, { auditFile: "export-audit.log" });
  await refused(plain, ["secret/X"], /secret\/X: 403 forbidden/);
  // Export answers 404 for a missing path as for a disabled export: keep falls back to GETs (the
  // contract's rule), which fail at the missing path; still nothing is written.
  await refused(withExport, ["app/ci/PLAIN", "app/ci/NOPE"], /app\/ci\/NOPE: 404 not_found/);
  await refused(plain, ["app/ci/NOPE"], /app\/ci\/NOPE: 404/);
  await refused(full, ["app/ci/PLAIN"], /503 audit_unavailable/);
  await refused(withExport, ["app/ci/"], /list/, { token: readerFile });
});

test("input failures before any connection: --token, http://, bad path, missing --format/--github-env, bad token file", async () => {
  await refused(withExport, ["app/ci/PLAIN"], /unknown flag "--token"/, { extra: ["--token", "x"] });
  await refused(withExport, ["app/ci/PLAIN"], /https/, { replace: (a) => a.map((x) => x.replace("https://", "http://")) });
  await refused(withExport, ["../etc"], /invalid --path/);
  await refused(withExport, ["app/ci/PLAIN"], /--format is required/, { replace: (a) => a.filter((x, i) => x !== "--format" && a[i - 1] !== "--format") });
  await refused(withExport, ["app/ci/PLAIN"], /requires --github-env/, { replace: (a) => a.filter((x, i) => x !== "--github-env" && a[i - 1] !== "--github-env") });
  await refused(withExport, ["app/ci/PLAIN"], /unknown --format/, { replace: (a) => a.map((x) => (x === "actions-env" ? "yaml" : x)) });
  const dirToken = join(fx.dir, "token-dir");
  mkdirSync(dirToken, { recursive: true });
  await refused(withExport, ["app/ci/PLAIN"], /token file/, { token: dirToken });
  await refused(withExport, ["app/ci/PLAIN"], /not a regular file/, { replace: (a) => a.map((x, i) => (a[i - 1] === "--github-env" ? fx.dir : x)) });
});

test("--format dotenv and json print the set on stdout; stderr stays empty; no env file needed", async () => {
  const base = ["fetch", "--url", withExport.url, "--ca", fx.caFile, "--token-file", tokenFile, "--path", "app/ci/"];
  const json = await runKeep([...base, "--format", "json"]);
  assert.is(json.status, 0, json.stderr);
  assert.is(json.stderr, "");
  assertNoLeak(json, ALL_VALUES(), { stdoutIsProduct: true });
  assert.equal(JSON.parse(json.stdout), CI);
  const dotenv = await runKeep([...base, "--format", "dotenv"]);
  assert.is(dotenv.status, 0, dotenv.stderr);
  assert.is(dotenv.stderr, "");
  const parsed = Object.fromEntries(dotenv.stdout.split("\n").slice(0, -1).map((l) => [l.slice(0, l.indexOf("=")), JSON.parse(l.slice(l.indexOf("=") + 1))]));
  assert.equal(parsed, CI);
  assert.is(createHash("sha256").update(dotenv.stdout).digest("hex").length, 64);
});

test.run();
