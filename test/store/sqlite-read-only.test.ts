// The SQLite file opened beside its owner for reading (the MCP server's queue tools, docs/mcp.md):
// it reads what the owner writes, writes nothing, refuses a missing file and a schema it does not
// read, and leaves the file byte-for-byte as it was.
import Database from "better-sqlite3";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { openSqliteBeside, openStore } from "../../runtime/store/open.js";
import { StoreError } from "../../runtime/store/store.js";
import { TestClock } from "../../runtime/time/clock.js";
import { makeTempDir } from "../helpers/temp-dir.js";

const dir = makeTempDir("store-sqlite-read-only");
process.on("exit", () => dir.cleanup());
const test = suite("sqlite: opened read-only beside the owner");

const message = (id: string, nowMs: number) => ({ id, route: "/r", target: "pull", receivedAtMs: nowMs, nextRunAtMs: nowMs, payload: Buffer.from("x"), headers: {} });

test("reads the owner's writes, refuses to write, and changes nothing in the file", async () => {
  const clock = new TestClock(1_700_000_000_000);
  const path = join(dir.path, "owned.db");
  const owner = await openStore({ backend: "sqlite", sqlitePath: path }, { clock });
  try {
    await owner.enqueue([message("a", clock.now())]);
    const reader = openSqliteBeside({ backend: "sqlite", sqlitePath: path }, clock, true);
    try {
      assert.equal((await reader.listMessages({ limit: 10 })).map((m) => m.id), ["a"]);
      await owner.enqueue([message("b", clock.now())]);
      assert.equal((await reader.listMessages({ limit: 10 })).map((m) => m.id).sort(), ["a", "b"]);
      const before = readFileSync(path);
      const refused = await reader.enqueue([message("c", clock.now())]).then(
        () => undefined,
        (error: unknown) => error,
      );
      assert.instance(refused, StoreError);
      assert.is((refused as StoreError).code, "read_only");
      assert.equal((await owner.listMessages({ limit: 10 })).map((m) => m.id).sort(), ["a", "b"]);
      assert.ok(readFileSync(path).equals(before));
    } finally {
      await reader.close();
    }
  } finally {
    await owner.close();
  }
});

test("a missing file is refused and not created; a newer schema is refused", async () => {
  const clock = new TestClock(1_700_000_000_000);
  const missing = join(dir.path, "missing.db");
  assert.throws(() => openSqliteBeside({ backend: "sqlite", sqlitePath: missing }, clock, true), (error: Error) => error instanceof StoreError);
  assert.throws(() => readFileSync(missing));

  const path = join(dir.path, "newer.db");
  const owner = await openStore({ backend: "sqlite", sqlitePath: path }, { clock });
  await owner.close();
  const db = new Database(path);
  db.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (999, 0)").run();
  db.close();
  assert.throws(
    () => openSqliteBeside({ backend: "sqlite", sqlitePath: path }, clock, true),
    (error: Error) => error instanceof StoreError && error.code === "schema_too_new",
  );
});

test.run();
