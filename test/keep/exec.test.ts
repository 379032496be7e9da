// `keep exec` (route B) with real programs, real HTTPS against `keep serve`, real signals: the
// child's environment, the exit codes 125/126/127/own/128+N, forwarded signals (also with the
// wrapper as PID 1 of a PID namespace), --report, and no child at all when Keep fails.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { spawnSync, type ChildProcess } from "node:child_process";
import { setTimeout as delay } from "node:timers/promises";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { reportSkipped } from "../helpers/skip.js";
import { assertNoLeak, run, runKeep, type Run } from "./consumer-harness.js";
import { issue, keepBin, makeFixture, put, serve, type Fixture, type Served } from "./keep-helpers.js";

const test = suite("keep exec");
let fx: Fixture;
let srv: Served;
let tokenFile: string;
let n = 0;
const VALUES = { API_KEY: "api-key-secret-1", DB_PASSWORD: "db pass\nline two\r\n" };
const NUL_VALUE = "nul-secret-5e1\u0000tail";
const BIG_VALUE = `big-secret-${"x".repeat(200 * 1024)}`;
const ALL = [...Object.values(VALUES), "clash-value-a", "clash-value-b", "nul-secret-5e1", BIG_VALUE.slice(0, 40)];
const f = (name: string): string => join(fx.dir, name);

test.before(async () => {
  fx = await makeFixture("exec");
  for (const [name, value] of Object.entries(VALUES)) put(fx, `app/svc/${name}`, value);
  put(fx, "app/clash/a/KEY", "clash-value-a");
  put(fx, "app/clash/b/KEY", "clash-value-b");
  put(fx, "app/nul/ZNUL", NUL_VALUE);
  put(fx, "app/big/BIG", BIG_VALUE);
  tokenFile = f("ci.token");
  issue(fx, "ci-app", tokenFile);
  srv = await serve(fx, ["--enable-export"]);
  writeFileSync(f("env-dump.cjs"), `require("fs").writeFileSync(process.argv[2], JSON.stringify({ env: process.env, argv: process.argv.slice(3) }));\n`);
  writeFileSync(
    f("signals.cjs"),
    `const fs = require("fs"); const marker = process.argv[2];
for (const s of ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"]) process.on(s, () => { fs.writeFileSync(marker, s); process.exit(40); });
fs.writeFileSync(marker + ".ready", String(process.pid)); setInterval(() => {}, 1000);\n`,
  );
  writeFileSync(f("noexec.sh"), "#!/bin/sh\nexit 0\n", { mode: 0o644 });
  chmodSync(f("noexec.sh"), 0o644);
  writeFileSync(f("nointerp.sh"), "#!/nonexistent/interpreter\nexit 0\n", { mode: 0o755 });
  mkdirSync(f("a-directory"), { recursive: true });
  mkdirSync(f("pathdir"), { recursive: true });
  writeFileSync(f("pathdir/noexec-on-path"), "#!/bin/sh\nexit 0\n", { mode: 0o644 });
  chmodSync(f("pathdir/noexec-on-path"), 0o644);
});
test.after(async () => {
  await srv.stop();
  fx.cleanup();
});

const base = (paths = ["app/svc/"], token = tokenFile, url = srv.url): string[] => ["exec", "--url", url, "--ca", fx.caFile, "--token-file", token, ...paths.flatMap((p) => ["--path", p])];
async function wrap(cmd: string[], opts: { flags?: string[]; env?: NodeJS.ProcessEnv; started?: (child: ChildProcess) => void } = {}): Promise<Run> {
  const r = await runKeep([...(opts.flags ?? base()), "--", ...cmd], { env: opts.env ?? process.env, started: opts.started });
  assertNoLeak(r, ALL, { childOutput: true });
  return r;
}
async function waitFor(file: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!existsSync(file)) {
    if (Date.now() > end) throw new Error(`${file} never appeared`);
    await delay(10);
  }
}

test("the child gets the inherited environment plus the secrets (overriding), its own arguments, inherited stdio", async () => {
  const out = f("env.json");
  const r = await wrap([process.execPath, f("env-dump.cjs"), out, "--token", "arg two"], { env: { ...process.env, INHERITED: "yes", API_KEY: "old" } });
  assert.is(r.status, 0, r.stderr);
  assert.is(r.stderr, "", "nothing on stderr without --report");
  const { env, argv } = JSON.parse(readFileSync(out, "utf8"));
  assert.is(env.INHERITED, "yes");
  assert.is(env.API_KEY, VALUES.API_KEY, "secrets override");
  assert.is(env.DB_PASSWORD, VALUES.DB_PASSWORD, "byte-exact");
  assert.equal(argv, ["--token", "arg two"], "arguments after -- belong to the child");
  const echo = await wrap(["sh", "-c", "echo from-child; echo to-err >&2"]);
  assert.is(echo.stdout, "from-child\n");
  assert.is(echo.stderr, "to-err\n");
});

test("--report: one stderr line with the sorted names and the program, never arguments or values", async () => {
  const r = await wrap(["sh", "-c", "exit 0", "secret-argument"], { flags: [...base(), "--report"] });
  assert.is(r.status, 0);
  const sh = spawnSync("sh", ["-c", "command -v sh"], { encoding: "utf8" }).stdout.trim();
  assert.is(r.stderr, `keep exec: delivering API_KEY DB_PASSWORD; running ${sh}\n`);
});

test("exit codes: the child's own, 127 not found, 126 cannot run, 128+N killed by a signal", async () => {
  const cases: [string[], number][] = [
    [["sh", "-c", "exit 7"], 7],
    [["sh", "-c", "exit 0"], 0],
    [["no-such-command-keep-test"], 127],
    [[f("missing-file")], 127],
    [[f("noexec.sh")], 126],
    [[f("a-directory")], 126],
    [[f("nointerp.sh")], 126],
    [["sh", "-c", "kill -KILL $$"], 137],
    [["sh", "-c", "kill -TERM $$"], 143],
  ];
  for (const [cmd, code] of cases) {
    const r = await wrap(cmd);
    assert.is(r.status, code, `${cmd.join(" ")}: ${r.stderr}`);
  }
  const onPath = await wrap(["noexec-on-path"], { env: { ...process.env, PATH: `${f("pathdir")}:${process.env.PATH}` } });
  assert.is(onPath.status, 126, "found on PATH without execute permission");
});

for (const signal of ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"] as const) {
  test(`${signal} sent to the wrapper reaches the child; the wrapper waits and exits with its code`, async () => {
    const marker = f(`sig-${n++}`);
    const r = await wrap([process.execPath, f("signals.cjs"), marker], {
      started: (child) => void waitFor(`${marker}.ready`).then(() => child.kill(signal)),
    });
    assert.is(readFileSync(marker, "utf8"), signal);
    assert.is(r.status, 40);
  });
}

test("a child killed by the forwarded SIGTERM gives 143", async () => {
  const r = await wrap(["sh", "-c", `touch ${f("sleep-ready")}; exec sleep 30`], {
    started: (child) => void waitFor(f("sleep-ready")).then(() => delay(100)).then(() => child.kill("SIGTERM")),
  });
  assert.is(r.status, 143);
});

test("as PID 1 of a PID namespace, SIGTERM still reaches the child", async () => {
  const probe = spawnSync("unshare", ["--pid", "--fork", "true"]);
  if (probe.status !== 0) return reportSkipped("keep exec as PID 1", 1, "unshare --pid is not available here");
  const marker = f("pid1-marker");
  const r = await run("unshare", ["--pid", "--fork", process.execPath, keepBin, ...base(), "--", process.execPath, f("signals.cjs"), marker], {
    started: (child) =>
      void waitFor(`${marker}.ready`).then(() => {
        const wrapper = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim().split(" ")[0]);
        assert.ok(readFileSync(`/proc/${wrapper}/status`, "utf8").includes("NSpid:"), "the wrapper runs in the namespace");
        assert.match(readFileSync(`/proc/${wrapper}/status`, "utf8"), /NSpid:\s+\d+\s+1\n/, "the wrapper is PID 1 there");
        process.kill(wrapper, "SIGTERM");
      }),
  });
  assertNoLeak(r, ALL, { childOutput: true });
  assert.is(readFileSync(marker, "utf8"), "SIGTERM");
  assert.is(r.status, 40);
});

async function noChild(flags: string[], pattern: RegExp): Promise<Run> {
  const marker = f(`child-ran-${n++}`);
  const r = await wrap(["sh", "-c", `touch ${marker}`], { flags });
  assert.is(r.status, 125, r.stderr);
  assert.match(r.stderr, pattern, r.stderr);
  assert.is(r.stdout, "");
  assert.not.ok(existsSync(marker), "no child started");
  return r;
}

test("Keep's failures exit 125 and start no child: token file, flags, refused sets, HTTP errors", async () => {
  mkdirSync(f("token-is-a-dir"), { recursive: true });
  await noChild(base(["app/svc/"], f("token-is-a-dir")), /token file/);
  await noChild([...base(), "--token", "x"], /unknown flag "--token"/);
  await noChild(base(["app/svc/"], tokenFile, srv.url.replace("https", "http")), /https/);
  await noChild(base(["app/clash/"]), /app\/clash\/a\/KEY and app\/clash\/b\/KEY/);
  await noChild(base(["app/empty/"]), /empty/);
  await noChild(base(["app/svc/NOPE"]), /404/);
  await noChild(base(["nothere/X"]), /403/);
  const bad = f("bad.token");
  writeFileSync(bad, "wrong-token\n");
  await noChild(base(["app/svc/"], bad), /401/);
  const r = await runKeep([...base()], {});
  assert.is(r.status, 125, "no -- CMD");
});

test("a value the environment cannot carry: a NUL byte is Keep's refusal (125), one over the kernel's limit cannot run (126); neither leaks", async () => {
  const nul = await noChild(base(["app/nul/ZNUL"]), /app\/nul\/ZNUL \(ZNUL\) contains a NUL byte/);
  assert.not.match(nul.stderr, /at |TypeError/, "a message, not a stack trace");
  const marker = f(`child-ran-${n++}`);
  const big = await wrap(["sh", "-c", `touch ${marker}`], { flags: base(["app/big/BIG"]) });
  assert.is(big.status, 126, big.stderr);
  assert.match(big.stderr, /E2BIG/);
  assert.not.match(big.stderr, /xxxx|at /, "no value, no stack trace");
  assert.not.ok(existsSync(marker), "no child started");
});

test("an unreachable service gives 125 at once, with exactly one connection attempt (no retry)", async () => {
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    sockets.push(s);
    s.destroy();
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const port = (server.address() as { port: number }).port;
  try {
    await noChild(base(["app/svc/"], tokenFile, `https://127.0.0.1:${port}`), /ECONNRESET|socket/);
    assert.is(sockets.length, 1, "one connection, no retry");
  } finally {
    server.close();
  }
  const refused = await noChild(base(["app/svc/"], tokenFile, `https://127.0.0.1:${port}`), /ECONNREFUSED/);
  assert.ok(refused.ms < 10_000);
});

test.run();
