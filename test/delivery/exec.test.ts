import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { deliverExec, headerEnvName, type ExecInput } from "../../runtime/delivery/exec.js";
import { waitDead } from "../helpers/processes.js";

const dir = mkdtempSync(join(tmpdir(), "spool-exec-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

let scriptCount = 0;
function script(text: string, mode = 0o755): string {
  const path = join(dir, `script-${++scriptCount}.sh`);
  writeFileSync(path, `#!/bin/sh\n${text}\n`);
  chmodSync(path, mode);
  return path;
}

function input(program: string, overrides: Partial<ExecInput> = {}): ExecInput {
  return { program, body: Buffer.from("hello"), messageId: "evt_1", route: "/jobs", attempt: 1, contentType: "application/json", headers: {}, timeoutMs: 10_000, ...overrides };
}

const exec = suite("exec attempt");

exec("the payload reaches stdin byte for byte, NUL and invalid UTF-8 included", async () => {
  const out = join(dir, "stdin.bin");
  const payload = Buffer.concat([Buffer.from([0x00, 0x01, 0xff, 0xfe, 0x0a, 0x0d]), Buffer.from("caf\u00e9\0end"), Buffer.alloc(200_000, 0x00)]);
  const result = await deliverExec(input(script(`cat > "${out}"`), { body: payload }));
  assert.is(result.outcome, "acked");
  assert.ok(readFileSync(out).equals(payload));
});

exec("the environment holds PATH, the SPOOL_* facts, the headers and the route's env, nothing else", async () => {
  const out = join(dir, "env.txt");
  process.env.SPOOL_TEST_PARENT_SECRET = "must-not-leak";
  const result = await deliverExec(
    input(script(`env > "${out}"`), {
      messageId: "evt_42",
      route: "/billing",
      attempt: 3,
      contentType: "application/x-www-form-urlencoded",
      headers: { "X-Request-Id": "req-9", "content-type": "application/x-www-form-urlencoded", "X-Weird.Name": "w" },
      env: { APP_MODE: "prod", SPOOL_ROUTE: "forged" },
    }),
  );
  assert.is(result.outcome, "acked");
  const env = Object.fromEntries(readFileSync(out, "utf8").trim().split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
  assert.is(env.SPOOL_MESSAGE_ID, "evt_42");
  assert.is(env.SPOOL_ROUTE, "/billing");
  assert.is(env.SPOOL_ATTEMPT, "3");
  assert.is(env.SPOOL_CONTENT_TYPE, "application/x-www-form-urlencoded");
  assert.is(env.SPOOL_HEADER_X_REQUEST_ID, "req-9");
  assert.is(env.SPOOL_HEADER_CONTENT_TYPE, "application/x-www-form-urlencoded");
  assert.is(env.SPOOL_HEADER_X_WEIRD_NAME, "w");
  assert.is(env.APP_MODE, "prod");
  assert.is(env.PATH, process.env.PATH);
  assert.is(env.SPOOL_TEST_PARENT_SECRET, undefined);
  assert.is(env.HOME, undefined);
  assert.is(headerEnvName("x-hub-signature-256"), "SPOOL_HEADER_X_HUB_SIGNATURE_256");
});

exec("exit 0 acks, any other exit retries, a signal retries", async () => {
  assert.is((await deliverExec(input(script("exit 0")))).outcome, "acked");
  const failed = await deliverExec(input(script("echo broken >&2; exit 3")));
  assert.is(failed.outcome, "retry");
  assert.is(failed.exitCode, 3);
  assert.is(failed.stderr, "broken\n");
  const killed = await deliverExec(input(script("kill -9 $$")));
  assert.is(killed.outcome, "retry");
  assert.is(killed.exitSignal, "SIGKILL");
});

exec("a program that cannot be started is dead with no_retry", async () => {
  const missing = await deliverExec(input(join(dir, "does-not-exist")));
  assert.is(missing.outcome === "dead" && missing.deadReason, "no_retry");
  const notExecutable = await deliverExec(input(script("exit 0", 0o644)));
  assert.is(notExecutable.outcome === "dead" && notExecutable.deadReason, "no_retry");
  const aDirectory = await deliverExec(input(dir));
  assert.is(aDirectory.outcome === "dead" && aDirectory.deadReason, "no_retry");
});

exec("on timeout the whole group dies: a child that ignores SIGTERM and its grandchild holding the pipes", async () => {
  const pids = join(dir, "pids.txt");
  // The child ignores TERM, starts a grandchild that inherits stdout/stderr, and waits.
  const stubborn = script(`trap '' TERM\nsleep 60 &\necho "$$ $!" > "${pids}"\necho started\nwait`);
  const result = await deliverExec(input(stubborn, { timeoutMs: 300 }));
  assert.is(result.outcome, "retry");
  assert.is(result.timedOut, true);
  assert.match(result.outcome === "retry" ? result.error ?? "" : "", /timeout after 300 ms/);
  assert.is(result.stdout, "started\n");
  const [childPid, grandchildPid] = readFileSync(pids, "utf8").trim().split(" ").map(Number);
  assert.ok(await waitDead(childPid), "child is gone");
  assert.ok(await waitDead(grandchildPid), "grandchild is gone");
});

exec("with a kill grace, SIGTERM comes first and SIGKILL follows for a child that ignores it", async () => {
  const marker = join(dir, "term-seen");
  const result = await deliverExec(input(script(`trap 'echo term > "${marker}"' TERM\nwhile :; do sleep 0.05; done`), { timeoutMs: 200, killGraceMs: 300 }));
  assert.is(result.outcome, "retry");
  assert.is(result.timedOut, true);
  assert.ok(existsSync(marker), "SIGTERM was delivered first");
});

exec("a grandchild holding the pipes after a clean exit does not hold the worker", async () => {
  const pidFile = join(dir, "lingering.txt");
  const result = await deliverExec(input(script(`sleep 60 &\necho $! > "${pidFile}"\nexit 0`), { pipeGraceMs: 200 }));
  assert.is(result.outcome, "acked");
  assert.ok(await waitDead(Number(readFileSync(pidFile, "utf8").trim())), "the lingering grandchild was killed");
});

exec("a flood of output is read to the end but only the first 4 KB are kept", async () => {
  const result = await deliverExec(input(script("yes a | head -c 5000000\nyes b | head -c 5000000 >&2\nexit 0")));
  assert.is(result.outcome, "acked");
  assert.is(result.stdout, "a\n".repeat(2048));
  assert.is(result.stderr, "b\n".repeat(2048));
  assert.is(result.outputTruncated, true);
});

exec("a program that does not read a large stdin still settles by its exit code", async () => {
  const result = await deliverExec(input(script("exit 0"), { body: Buffer.alloc(8 * 1024 * 1024, 0x41) }));
  assert.is(result.outcome, "acked");
  const failing = await deliverExec(input(script("exit 5"), { body: Buffer.alloc(8 * 1024 * 1024, 0x41) }));
  assert.is(failing.outcome, "retry");
  assert.is(failing.exitCode, 5);
});

exec("an abort kills the group and rejects without an outcome", async () => {
  const pidFile = join(dir, "abort.txt");
  const controller = new AbortController();
  const pending = deliverExec(input(script(`echo $$ > "${pidFile}"\nsleep 60`), { signal: controller.signal }));
  for (let i = 0; i < 200 && !existsSync(pidFile); i++) await delay(10);
  controller.abort();
  try {
    await pending;
    assert.unreachable("should have thrown");
  } catch (error) {
    assert.is((error as Error).name, "AbortError");
  }
  assert.ok(await waitDead(Number(readFileSync(pidFile, "utf8").trim())));
});

exec.run();
