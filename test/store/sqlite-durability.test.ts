// An answered enqueue survives SIGKILL: a child enqueues under concurrency and is killed at a random
// moment; after reopening, every id the child reported as stored is there (DECISIONS.md "Storage").
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/clock.js";
import { openStore } from "../../runtime/store/open.js";
import type { StoreError } from "../../runtime/store/store.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { message } from "./contract.js";

const child = fileURLToPath(new URL("./sqlite-durability-child.js", import.meta.url));
const dir = makeTempDir("store-durability");
const test = suite("sqlite durability");

/** Runs the child until `killAfterMs` after it is ready, SIGKILLs it, returns the ids it reported. */
function runAndKill(path: string, killAfterMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child, path], { stdio: ["ignore", "pipe", "inherit"] });
    let buffered = "";
    const answered: string[] = [];
    proc.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        if (line === "ready") setTimeout(() => proc.kill("SIGKILL"), killAfterMs);
        else if (line) answered.push(line);
      }
    });
    proc.on("error", reject);
    proc.on("close", (_code, signal) => (signal === "SIGKILL" ? resolve(answered) : reject(new Error(`child ended without being killed (${signal})`))));
  });
}

const killDelaysMs = [5, 60, 150, 300, 40 + Math.floor(Math.random() * 400)];
for (const [run, delayMs] of killDelaysMs.entries()) {
  test(`every answered enqueue is present after SIGKILL (run ${run + 1}, kill after ${delayMs} ms)`, async () => {
    const path = join(dir.path, `durability-${run}.db`);
    const answered = await runAndKill(path, delayMs);
    const again = await runAndKill(path, 20);
    const all = [...answered, ...again];
    assert.ok(answered.length > 0 || delayMs < 20, "the child answered some enqueues before the kill");
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
