// A group's savepoint journal stays in memory (temp_store = MEMORY). SQLite copies every page a
// savepoint changes into a statement journal, which spills to a temp file past 64 KiB: created and
// unlinked at once under SQLITE_TMPDIR, then written page by page. On the drain that was an open, an
// unlink and a pwrite per page for every lease group, about a third of the writer's syscalls.
import { mkdirSync, watch } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makeTempDir } from "../helpers/temp-dir.js";

const dir = makeTempDir("store-temp-store");
process.on("exit", () => dir.cleanup());
// SQLite reads SQLITE_TMPDIR once, when it initialises: set it before better-sqlite3 is loaded.
const tempDir = join(dir.path, "sqlite-tmp");
mkdirSync(tempDir);
process.env.SQLITE_TMPDIR = tempDir;
const { TestClock } = await import("../../runtime/time/clock.js");
const { openStore } = await import("../../runtime/store/open.js");

const test = suite("sqlite temp store");

test("leasing and acking a batch of large messages opens no temp file", async () => {
  const created: string[] = [];
  const watcher = watch(tempDir, (_event, name) => created.push(String(name)));
  try {
    const store = await openStore({ backend: "sqlite", sqlitePath: join(dir.path, "spool.db") }, { clock: new TestClock() });
    const payload = new Uint8Array(3000).fill(7);
    await store.enqueue(Array.from({ length: 64 }, (_, i) => ({ id: `evt_big_${i}`, route: "/r", target: "pull", payload, headers: {} })));
    const leased = await store.dequeue({ route: "/r", batch: 64, leaseTtlMs: 30_000 });
    assert.is(leased.length, 64);
    const acked = await store.ack(leased.map((m) => m.leaseId));
    assert.is(acked.settled.length, 64);
    await store.close();
    // inotify events arrive on the event loop after the fact.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(created, [], "no temp file was created");
  } finally {
    watcher.close();
  }
});

test.run();
