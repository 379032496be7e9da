// PostgreSQL sessions killed while the store is under load: every call resolves or fails with a
// catchable `unavailable`, what was accepted is stored and what was refused is not, and the process
// survives. The driver (postgres.js 3.4.9) crashed the process here, from a flush scheduled before
// the close, and from a session killed while it read the server's array types at startup, which
// also handed the dead session's error to the next session's first query
// (scripts/patch-postgres-driver.mjs, run at install, patches both); the child process is what would die.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath } from "../helpers/repo.js";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";

const dsn = postgresTestDsn();
const test = suite("postgres: sessions killed under load");

test("the installed driver carries the closed-socket and startup-close patches", () => {
  const driver = readFileSync(repoPath("node_modules", "postgres", "src", "connection.js"), "utf8");
  assert.ok(driver.includes("/* spool: patched closed-socket flush */"));
  assert.ok(driver.includes("/* spool: patched startup close */"));
});

if (!dsn) {
  reportSkipped("postgres: sessions killed under load", 1, "SPOOL_TEST_POSTGRES_DSN is not set");
} else {
  const schemas = new PgSchemas(dsn, "spool_killed_load");
  test("rounds of 2,000 concurrent enqueues while every session is killed six times: each succeeds or fails unavailable, and the process lives", async () => {
    const schema = schemas.next();
    try {
      const child = spawn(process.execPath, [fileURLToPath(new URL("./postgres-killed-under-load-child.js", import.meta.url)), dsn, schema], { stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout.on("data", (chunk) => (output += chunk));
      child.stderr.on("data", (chunk) => (output += chunk));
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      assert.is(code, 0, output.slice(-2000));
      const counts = JSON.parse(output.trim().split("\n").pop()!) as { ok: number; refused: number; other: number; acceptedButMissing: number; refusedButStored: number };
      assert.is(counts.other, 0, output);
      assert.is(counts.ok + counts.refused, 6_000);
      assert.is(counts.acceptedButMissing, 0, "every accepted message is stored");
      assert.is(counts.refusedButStored, 0, "no refused message is stored (a COMMIT whose answer was lost is looked up)");
    } finally {
      await schemas.dropAll();
    }
  });
}

test.run();
