// An answered enqueue survives SIGKILL: a child enqueues under concurrency and is killed at a random
// moment; after reopening, every id the child reported as stored is there (docs/decisions.md D40).
// An answered ack survives it too, although ack commits do not wait for the fsync (the Store
// contract's durability note): they are in the WAL, and only a power loss could undo them.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { systemClock, TestClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";
import type { StoreError } from "../../runtime/store/store.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { message } from "./contract.js";

const child = fileURLToPath(new URL("./sqlite-durability-child.js", import.meta.url));
const dir = makeTempDir("store-durability");
const test = suite("sqlite durability");

interface Reported {
  stored: string[];
  acked: string[];
}

/**
 * Runs the child until `killAfterMs` after it has reported its first stored message (in drain mode:
 * both an ack and a stored message), so a slow start on a busy machine cannot leave the test nothing
 * to check, then SIGKILLs it and returns the ids it reported.
 */
function runAndKill(path: string, killAfterMs: number, mode: "enqueue" | "drain" = "enqueue"): Promise<Reported> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child, path, mode], { stdio: ["ignore", "pipe", "inherit"] });
    let buffered = "";
    let ready = false;
    let killTimer: NodeJS.Timeout | undefined;
    const answered: Reported = { stored: [], acked: [] };
    proc.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        if (line === "ready") ready = true;
        else if (line.startsWith("stored ")) answered.stored.push(line.slice(7));
        else if (line.startsWith("acked ")) answered.acked.push(line.slice(6));
      }
      const started = ready && answered.stored.length > 0 && (mode === "enqueue" || answered.acked.length > 0);
      if (started && !killTimer) killTimer = setTimeout(() => proc.kill("SIGKILL"), killAfterMs);
    });
    proc.on("error", reject);
    proc.on("close", (_code, signal) => (signal === "SIGKILL" ? resolve(answered) : reject(new Error(`child ended without being killed (${signal})`))));
  });
}

const killDelaysMs = [5, 60, 150, 300, 40 + Math.floor(Math.random() * 400)];
for (const [run, delayMs] of killDelaysMs.entries()) {
  test(`every answered enqueue is present after SIGKILL (run ${run + 1}, kill after ${delayMs} ms)`, async () => {
    const path = join(dir.path, `durability-${run}.db`);
    const answered = (await runAndKill(path, delayMs)).stored;
    const again = (await runAndKill(path, 20)).stored;
    const all = [...answered, ...again];
    assert.ok(answered.length > 0, "the child answered some enqueues before the kill");
    const rowsBefore = await countQueued(path);
    // max_depth = rows + 1: the trigger-kept depth counter must agree with the rows after the crash.
    const store = await openStore({ backend: "sqlite", sqlitePath: path, maxDepth: rowsBefore + 1 }, { clock: new TestClock() });
    try {
      for (let i = 0; i < all.length; i += 1000) {
        const chunk = all.slice(i, i + 1000);
        const found = await store.getMessages(chunk);
        assert.is(found.length, chunk.length, `${chunk.length - found.length} answered ids are missing`);
      }
      assert.ok(rowsBefore >= all.length);
      await store.enqueue([message("after-restart")]);
      try {
        await store.enqueue([message("over-depth")]);
        assert.unreachable("the depth counter lost rows in the crash");
      } catch (error) {
        assert.is((error as StoreError).code, "queue_full");
      }
    } finally {
      await store.close();
    }
  });
}

for (const [run, delayMs] of [80, 150 + Math.floor(Math.random() * 300)].entries()) {
  test(`every answered ack and enqueue survives SIGKILL while they share commits (run ${run + 1}, kill after ${delayMs} ms)`, async () => {
    const path = join(dir.path, `durability-drain-${run}.db`);
    const prefill = Array.from({ length: 20_000 }, (_, i) => message(`pre-${i}`, { route: "/drain" }));
    const seed = await openStore({ backend: "sqlite", sqlitePath: path }, { clock: systemClock });
    for (let i = 0; i < prefill.length; i += 1000) await seed.enqueue(prefill.slice(i, i + 1000));
    await seed.close();

    const reported = await runAndKill(path, delayMs, "drain");
    assert.ok(reported.acked.length > 0, "the child acked some messages before the kill");
    assert.ok(reported.stored.length > 0, "the child stored some messages before the kill");
    const store = await openStore({ backend: "sqlite", sqlitePath: path }, { clock: new TestClock() });
    try {
      for (let i = 0; i < reported.acked.length; i += 1000) {
        const chunk = reported.acked.slice(i, i + 1000);
        const left = await store.getMessages(chunk);
        assert.is(left.length, 0, `${left.length} acked messages came back after the crash: ${left.slice(0, 3).map((m) => m.id)}`);
      }
      for (let i = 0; i < reported.stored.length; i += 1000) {
        const chunk = reported.stored.slice(i, i + 1000);
        assert.is((await store.getMessages(chunk)).length, chunk.length, "answered enqueues are missing");
      }
      // Rows left = prefilled + stored - acked, give or take the writes that committed in the child's
      // last moment but were not printed: at most one ack per consumer (8 each), one enqueue per caller.
      const stats = await store.queueStats();
      const active = stats.byState.queued + stats.byState.leased;
      const expected = prefill.length + reported.stored.length - reported.acked.length;
      assert.ok(active >= expected - 32 && active <= expected + 10, `${active} rows left, expected about ${expected}`);
    } finally {
      await store.close();
    }
  });
}

async function countQueued(path: string): Promise<number> {
  const store = await openStore({ backend: "sqlite", sqlitePath: path }, { clock: new TestClock() });
  try {
    return (await store.queueStats()).byState.queued;
  } finally {
    await store.close();
  }
}

test.after(() => dir.cleanup());
test.run();
