import Database from "better-sqlite3";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { waitDead } from "../helpers/processes.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { postWebhook, waitForAttempts, waitForDead } from "./helpers/delivery.js";
import { eventually } from "./helpers/http.js";
import { spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "./helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "./helpers/spoolfile.js";

// `deliver exec` through the built `spool run` (docs/decisions.md D37): a real script gets the
// stored payload on stdin byte for byte and the SPOOL_* environment; exit 0 acks, exit 1 retries;
// a program that outlives its timeout (ignoring SIGTERM, with a grandchild holding its pipes) is
// killed with its whole group and retried, and the worker goes on with the next message.

const tmp = makeTempDir("exec");
process.on("exit", () => tmp.cleanup());
const out = join(tmp.path, "out");
mkdirSync(out);

function script(name: string, body: string): string {
  const path = join(tmp.path, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

const capture = script(
  "capture.sh",
  `base="${out}/$SPOOL_MESSAGE_ID"
cat > "$base.body"
env > "$base.env"
printf '%s\\n' "$@" > "$base.args"
exit 0`,
);

const flaky = script(
  "flaky.sh",
  `cat > /dev/null
echo "$SPOOL_MESSAGE_ID $SPOOL_ATTEMPT" >> "${out}/flaky.log"
[ "$SPOOL_ATTEMPT" -ge 2 ] && exit 0
echo "not yet" >&2
exit 1`,
);

// "hang": ignore SIGTERM, start a grandchild that inherits stdout/stderr, wait for it. Anything else: done.
const stubborn = script(
  "stubborn.sh",
  `body=$(cat)
if [ "$body" = "hang" ]; then
  trap '' TERM
  sleep 60 &
  echo "$$ $!" >> "${out}/stubborn.pids"
  wait
  exit 0
fi
echo "$body" >> "${out}/stubborn.done"
exit 0`,
);

const e2e = suite("spool run: deliver exec end to end");
let spool: SpoolProcess;
let base: ReturnType<typeof urls>;

e2e.before(async () => {
  const ports = await freePorts();
  base = urls(ports);
  const body = `
/hooks/capture {
  deliver exec "${capture}" "first arg" second {
    env ROUTE_KEY "route value"
  }
}
/hooks/flaky {
  deliver exec "${flaky}" {
    retry exponential max 3 base 50ms cap 50ms jitter 0
  }
}
/hooks/stubborn {
  deliver_concurrency 1
  deliver exec "${stubborn}" {
    timeout 500ms
    retry exponential max 1 base 50ms cap 50ms jitter 0
  }
}
`;
  // A variable of spool's own environment that must not leak into the program's.
  spool = spawnSpool(["run", "--config", writeSpoolfile(tmp.path, spoolfileText(ports, body)), "--db", join(tmp.path, "spool.db")], { env: { SPOOL_E2E_PRIVATE: "do-not-leak" } });
  await waitHealthy(spool, base.admin);
});

e2e.after(async () => {
  if (spool) await stopSpool(spool);
});

function readEnv(path: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(path, "utf8")
      .trim()
      .split("\n")
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
}

e2e("the program gets the exact payload bytes on stdin, its arguments and the SPOOL_* environment; exit 0 acks", async () => {
  const payload = Buffer.concat([Buffer.from([0x00, 0xff, 0xfe, 0x0d, 0x0a]), Buffer.from("café\0tail"), Buffer.alloc(70_000, 0x41)]);
  const [id] = await postWebhook(base.ingress, "/hooks/capture", payload, { "content-type": "application/octet-stream", "x-request-id": "req-42" });
  const [attempt] = await waitForAttempts(base.admin, "/hooks/capture", id, 1, "the exec attempt");
  assert.is(attempt.outcome, "acked");
  assert.is(attempt.target, `exec:${capture}`);

  assert.ok(readFileSync(join(out, `${id}.body`)).equals(payload), "stdin held the stored bytes exactly");
  assert.equal(readFileSync(join(out, `${id}.args`), "utf8").split("\n").slice(0, -1), ["first arg", "second"]);
  const env = readEnv(join(out, `${id}.env`));
  assert.is(env.SPOOL_MESSAGE_ID, id);
  assert.is(env.SPOOL_ROUTE, "/hooks/capture");
  assert.is(env.SPOOL_ATTEMPT, "1");
  assert.is(env.SPOOL_CONTENT_TYPE, "application/octet-stream");
  assert.is(env.SPOOL_HEADER_X_REQUEST_ID, "req-42");
  assert.is(env.ROUTE_KEY, "route value");
  assert.ok(env.PATH, "PATH is passed");
  assert.is(env.SPOOL_E2E_PRIVATE, undefined, "spool's own environment does not leak");
});

e2e("exit 1 retries with the attempt recorded; the next attempt (SPOOL_ATTEMPT=2) acks", async () => {
  const [id] = await postWebhook(base.ingress, "/hooks/flaky", "job");
  const attempts = await waitForAttempts(base.admin, "/hooks/flaky", id, 2, "two exec attempts");
  assert.equal(
    attempts.map((a) => [a.attempt, a.outcome, a.error]),
    [
      [1, "retry", "exit code 1"],
      [2, "acked", undefined],
    ],
  );
  const runs = readFileSync(join(out, "flaky.log"), "utf8").trim().split("\n").filter((line) => line.startsWith(id));
  assert.equal(runs, [`${id} 1`, `${id} 2`]);
});

e2e("a program past its timeout is killed with its whole group, retried, then dead; the worker delivers the next message", async () => {
  // deliver_concurrency 1: the second message can only run once the worker is free of the first.
  const [hanging] = await postWebhook(base.ingress, "/hooks/stubborn", "hang");
  const [next] = await postWebhook(base.ingress, "/hooks/stubborn", "next");

  const [nextAttempt] = await waitForAttempts(base.admin, "/hooks/stubborn", next, 1, "the next message");
  assert.is(nextAttempt.outcome, "acked");
  assert.is(readFileSync(join(out, "stubborn.done"), "utf8"), "next\n");

  const dead = await waitForDead(base.admin, "/hooks/stubborn", hanging);
  assert.is(dead.dead_reason, "max_retries");
  const attempts = await waitForAttempts(base.admin, "/hooks/stubborn", hanging, 2, "both attempts of the hanging message");
  assert.equal(
    attempts.map((a) => [a.attempt, a.outcome, a.error]),
    [
      [1, "retry", "timeout after 500 ms"],
      [2, "dead", "timeout after 500 ms"],
    ],
  );

  // Each attempt started a script and a grandchild; none of them outlived its attempt.
  const pidsFile = join(out, "stubborn.pids");
  await eventually(() => (existsSync(pidsFile) && readFileSync(pidsFile, "utf8").trim().split("\n").length === 2 ? true : undefined), 5_000, "two pid lines");
  const pids = readFileSync(pidsFile, "utf8").trim().split(/\s+/).map(Number);
  assert.is(pids.length, 4);
  for (const pid of pids) assert.ok(await waitDead(pid), `process ${pid} is gone`);
});

e2e("SIGTERM lets a running delivery finish for up to 10 s: a 9 s program completes, is acked, and the process exits within 15 s", async () => {
  const dir = join(tmp.path, "term");
  mkdirSync(dir);
  const slow = script("slow.sh", `cat > /dev/null\ntouch "${dir}/started"\nsleep 9\ntouch "${dir}/finished"\nexit 0`);
  const ports = await freePorts();
  const own = urls(ports);
  const dbPath = join(dir, "spool.db");
  const proc = spawnSpool(["run", "--config", writeSpoolfile(dir, spoolfileText(ports, `/hooks/slow {\n  deliver exec "${slow}" { timeout 20s }\n}\n`)), "--db", dbPath]);
  try {
    await waitHealthy(proc, own.admin);
    const [id] = await postWebhook(own.ingress, "/hooks/slow", "job");
    await eventually(() => (existsSync(join(dir, "started")) ? true : undefined), 10_000, "the program to start");
    const signalled = Date.now();
    proc.kill("SIGTERM");
    const result = await proc.exited;
    assert.is(result.code, 0, proc.output());
    assert.ok(Date.now() - signalled < 15_000, "exited within 15 s");
    assert.ok(existsSync(join(dir, "finished")), "the program ran to its end");
    const db = new Database(dbPath, { readonly: true });
    try {
      assert.is(db.prepare("SELECT state FROM messages WHERE id = ?").get(id), undefined, "the message was acked (deleted), not left leased");
      assert.equal(db.prepare("SELECT outcome FROM attempts WHERE message_id = ?").all(id), [{ outcome: "acked" }]);
    } finally {
      db.close();
    }
  } finally {
    proc.kill("SIGKILL");
  }
});

e2e.run();
