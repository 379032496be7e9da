// Background WAL checkpoints (runtime/store/sqlite/checkpointer.ts): committed frames reach the
// database file without a checkpoint on the event loop, each one is reported to the observer (the
// spool_store_sqlite_checkpoint_* metrics), and closing the store stops the worker.
import Database from "better-sqlite3";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import type { SqliteEvent, StoreObserver } from "../../runtime/store/observer.js";
import { openStore } from "../../runtime/store/open.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { message } from "./contract.js";

const dir = makeTempDir("store-checkpointer");
process.on("exit", () => dir.cleanup());
const test = suite("sqlite background checkpoints");

async function eventually(what: string, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test("committed messages reach the database file itself, and each checkpoint is reported", async () => {
  const events: SqliteEvent[] = [];
  const observer: StoreObserver = { operation() {}, sqliteEvent: (event) => void events.push(event), dropped() {} };
  const path = join(dir.path, "background.db");
  const store = await openStore({ backend: "sqlite", sqlitePath: path }, { clock: new TestClock(), observer });
  try {
    // Far below wal_autocheckpoint (10,000 pages): only the background worker checkpoints these.
    for (let i = 0; i < 10; i++) await store.enqueue(Array.from({ length: 100 }, (_, j) => message(`m-${i}-${j}`)));
    await eventually("a background checkpoint", () => events.includes("checkpoint"));
    // The writer's connection must not have copied them: it commits no more and never checkpoints
    // on its own below the threshold. Copy only the main file, as if the WAL were lost.
    const copy = join(dir.path, "main-file-only.db");
    await eventually("every frame copied", () => {
      copyFileSync(path, copy);
      const db = new Database(copy, { readonly: true });
      try {
        return (db.prepare("SELECT count(*) FROM messages").pluck().get() as number) === 1000;
      } finally {
        db.close();
      }
    });
    assert.not.ok(events.includes("checkpoint_error"));
  } finally {
    await store.close();
  }
});

test("closing the store stops the worker: frames written afterwards stay in the WAL", async () => {
  const path = join(dir.path, "stop.db");
  const store = await openStore({ backend: "sqlite", sqlitePath: path }, { clock: new TestClock() });
  await store.enqueue([message("before-close")]);
  await store.close();
  // Kept open while the main file is copied: SQLite checkpoints when the last connection closes.
  const db = new Database(path);
  try {
    db.pragma("wal_autocheckpoint = 0");
    db.prepare("INSERT INTO messages (id, route, target, state, received_at, next_run_at, payload, headers) VALUES ('after-close', '/r', 'pull', 'queued', 0, 0, x'00', '{}')").run();
    // Five checkpoint intervals and more: a worker still running would have copied the row by now.
    await new Promise((resolve) => setTimeout(resolve, 5 * 200 + 500));
    const copy = join(dir.path, "stop-main-only.db");
    copyFileSync(path, copy);
    const mainOnly = new Database(copy, { readonly: true });
    try {
      assert.is(mainOnly.prepare("SELECT count(*) FROM messages WHERE id = 'after-close'").pluck().get(), 0);
      assert.is(mainOnly.prepare("SELECT count(*) FROM messages WHERE id = 'before-close'").pluck().get(), 1);
    } finally {
      mainOnly.close();
    }
  } finally {
    db.close();
  }
});

test.run();
