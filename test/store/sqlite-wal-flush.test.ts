// The WAL flusher behind durable SQLite group commits (runtime/store/sqlite/wal-flush.ts): a caller
// is released only by an fsync that started after it asked, callers asking while one runs share the
// next, a failure reaches exactly the callers of that fsync, and a real WAL file is fsynced.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { WalFlusher } from "../../runtime/store/sqlite/wal-flush.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { heldSync } from "../helpers/held-wal-sync.js";

const dir = makeTempDir("store-wal-flush");
process.on("exit", () => dir.cleanup());
let counter = 0;

function walFile(): string {
  const path = join(dir.path, `f-${++counter}.db-wal`);
  writeFileSync(path, "frames");
  return path;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function track(promise: Promise<void>): { state: () => string } {
  let state = "pending";
  promise.then(
    () => (state = "flushed"),
    (error: Error) => (state = `failed: ${error.message}`),
  );
  return { state: () => state };
}

const test = suite("sqlite wal flush");

test("a flush asked for while an fsync runs waits for the next one, which all such callers share", async () => {
  const wal = heldSync();
  const flusher = new WalFlusher(walFile(), wal.sync);
  const first = track(flusher.flush());
  assert.is(wal.started(), 1);
  const second = track(flusher.flush());
  const third = track(flusher.flush());
  assert.is(wal.started(), 1, "no second fsync while one runs");
  wal.finish();
  await settle();
  assert.is(first.state(), "flushed");
  assert.is(second.state(), "pending", "the fsync in flight started before the second caller asked");
  assert.is(third.state(), "pending");
  assert.is(wal.started(), 2, "the next fsync starts as soon as the first ends");
  wal.finish();
  await settle();
  assert.is(second.state(), "flushed");
  assert.is(third.state(), "flushed");
  assert.is(wal.started(), 2, "nobody left waiting: no third fsync");
  flusher.close();
});

test("a failed fsync fails only its own callers; idle() waits for the fsync in flight", async () => {
  const wal = heldSync();
  const flusher = new WalFlusher(walFile(), wal.sync);
  const failing = track(flusher.flush());
  const later = track(flusher.flush());
  wal.finish(Object.assign(new Error("EIO: i/o error"), { code: "EIO" }));
  await settle();
  assert.is(failing.state(), "failed: EIO: i/o error");
  assert.is(later.state(), "pending");
  let idle = false;
  void flusher.idle().then(() => (idle = true));
  await settle();
  assert.is(idle, false, "an fsync is still in flight");
  wal.finish();
  await settle();
  assert.is(later.state(), "flushed");
  // idle() asked for one more fsync after the one in flight, so everything before it is covered.
  wal.finish();
  await settle();
  await settle();
  assert.is(idle, true);
  flusher.close();
});

test("fsyncs a real WAL file; a missing one fails the flush", async () => {
  const flusher = new WalFlusher(walFile());
  await flusher.flush();
  await Promise.all([flusher.flush(), flusher.flush()]);
  await flusher.idle();
  flusher.close();

  const missing = new WalFlusher(join(dir.path, "none.db-wal"));
  const error = await missing.flush().then(
    () => undefined,
    (e: NodeJS.ErrnoException) => e,
  );
  assert.is(error?.code, "ENOENT");
});

test.run();
