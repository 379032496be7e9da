// Bad conditions around the SQLite file give clear StoreErrors and never damage stored data: a
// database locked by another process, a read-only file, a schema from a newer Spool.
import Database from "better-sqlite3";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { StoreError, type Store } from "../../runtime/store/store.js";
import { makeReadOnly } from "../helpers/read-only.js";
import { reportSkipped } from "../helpers/skip.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { message } from "./contract.js";

const dir = makeTempDir("store-faults");
const test = suite("sqlite faults");
let counter = 0;

async function seeded(options: { busyTimeoutMs?: number } = {}): Promise<{ path: string; store: Store }> {
  const path = join(dir.path, `faults-${++counter}.db`);
  const store = await openStore({ backend: "sqlite", sqlitePath: path, sqliteBusyTimeoutMs: options.busyTimeoutMs ?? 50 }, { clock: new TestClock() });
  await store.enqueue([message("kept-1"), message("kept-2")]);
  return { path, store };
}

async function storedIds(path: string): Promise<string[]> {
  const store = await openStore({ backend: "sqlite", sqlitePath: path }, { clock: new TestClock() });
  try {
    return (await store.listMessages({ limit: 100 })).map((v) => v.id).sort();
  } finally {
    await store.close();
  }
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "no error";
  } catch (error) {
    assert.instance(error, StoreError);
    return (error as StoreError).code;
  }
}

test("a database locked by another process refuses writes as unavailable and keeps its data", async () => {
  const { path, store } = await seeded();
  const other = new Database(path);
  other.exec("BEGIN EXCLUSIVE");
  try {
    assert.is(await codeOf(store.enqueue([message("while-locked")])), "unavailable");
    const failure = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 1000 }).catch((e: StoreError) => e);
    assert.instance(failure, StoreError);
    assert.match((failure as StoreError).message, /locked/);
  } finally {
    other.exec("ROLLBACK");
    other.close();
  }
  await store.enqueue([message("after-unlock")]);
  await store.close();
  assert.equal(await storedIds(path), ["after-unlock", "kept-1", "kept-2"]);
});

test("a database from a newer Spool is refused and left untouched", async () => {
  const { path, store } = await seeded();
  await store.close();
  const raw = new Database(path);
  raw.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)").run();
  raw.close();
  assert.is(await codeOf(openStore({ backend: "sqlite", sqlitePath: path }, { clock: new TestClock() })), "schema_too_new");
  const check = new Database(path, { readonly: true });
  assert.is((check.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n, 2);
  check.close();
});

test("unknown ids and empty calls change nothing", async () => {
  const { path, store } = await seeded();
  assert.is(await store.changeByIds("cancel", ["nope-1", "nope-2"]), 0);
  assert.is(await store.deleteDead(["kept-1"]), 0);
  assert.equal(await store.ack(["lease_ffffffffffffffff"]), { settled: [], conflicts: [{ leaseId: "lease_ffffffffffffffff", reason: "lease_not_found" }] });
  assert.is(await codeOf(store.ack(Array.from({ length: 1001 }, (_, i) => `lease_${i}`))), "invalid_argument");
  await store.enqueue([]);
  await store.close();
  assert.equal(await storedIds(path), ["kept-1", "kept-2"]);
});

{
  const probe = join(dir.path, "probe.db");
  new Database(probe).close();
  const undo = makeReadOnly(probe);
  undo?.();
  if (!undo) {
    reportSkipped("sqlite faults: read-only file", 1, "running as root without chattr, the file cannot be made read-only");
  } else {
    test("a read-only database file gives a read_only error and keeps its data", async () => {
      const { path, store } = await seeded();
      await store.close();
      const restore = makeReadOnly(path)!;
      try {
        let reopened: Store | undefined;
        const openCode = await codeOf(
          openStore({ backend: "sqlite", sqlitePath: path }, { clock: new TestClock() }).then((s) => (reopened = s)),
        );
        if (openCode === "no error") {
          assert.is(await codeOf(reopened!.enqueue([message("refused")])), "read_only");
          await reopened!.close();
        } else {
          assert.ok(["read_only", "unavailable"].includes(openCode), `open failed with ${openCode}`);
        }
      } finally {
        restore();
      }
      assert.equal(await storedIds(path), ["kept-1", "kept-2"]);
    });
  }
}

test.after(() => dir.cleanup());
test.run();
