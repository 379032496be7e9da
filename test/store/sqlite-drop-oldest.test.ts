// drop_policy drop_oldest on SQLite finds the oldest queued messages through an index of queued
// messages alone, which the store keeps only while drop_oldest is configured: without it every
// enqueue at max_depth walked the older delivered, dead and leased entries of messages_received.
import Database from "better-sqlite3";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { message } from "./contract.js";

const dir = makeTempDir("store-sqlite-drop-oldest");
process.on("exit", () => dir.cleanup());
const test = suite("sqlite drop_oldest index");

const indexes = (path: string): string[] => {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND name = 'messages_queued_received'").pluck().all() as string[];
  } finally {
    db.close();
  }
};

test("the queued-only index exists while drop_oldest is configured and is dropped when it no longer is", async () => {
  const path = join(dir.path, "drop.db");
  const clock = new TestClock();
  let store = await openStore({ backend: "sqlite", sqlitePath: path, maxDepth: 2, dropOldest: true }, { clock });
  assert.equal(indexes(path), ["messages_queued_received"]);
  // The removal reads that index: older dead messages stay.
  await store.enqueue([message("dead-1", { receivedAtMs: clock.now() - 50 })]);
  const [dead] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 1000 });
  await store.nack([dead.leaseId], { dead: true, reason: "poison" });
  await store.enqueue([message("a", { receivedAtMs: clock.now() - 10 }), message("b")]);
  await store.enqueue([message("c")]);
  assert.equal((await store.listMessages({ limit: 10 })).map((v) => v.id).sort(), ["b", "c", "dead-1"]);
  await store.close();
  store = await openStore({ backend: "sqlite", sqlitePath: path, maxDepth: 2 }, { clock });
  await store.close();
  assert.equal(indexes(path), []);
});

test.run();
