// PostgreSQL schema upgrades on a database that already holds messages: schema 4 turns the captured
// headers from jsonb into json; what was stored before is still dequeued, and what is stored after
// keeps its header order.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { systemClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";

const dsn = postgresTestDsn();
const test = suite("postgres: schema upgrades");

if (!dsn) {
  reportSkipped("postgres: schema upgrades", 1, "SPOOL_TEST_POSTGRES_DSN is not set");
} else {
  const schemas = new PgSchemas(dsn, "spool_migration");
  const open = (schema: string) => openStore({ backend: "postgres", postgresDsn: dsn, postgresSchema: schema, postgresPoolSize: 2 }, { clock: systemClock });

  test.after(() => schemas.dropAll());

  test("schema 3 → 5 with messages stored: they are dequeued after the upgrade, and new ones keep their header order", async () => {
    const schema = schemas.next();
    const headers = { "x-github-delivery": "1", host: "hooks.example", accept: "*/*" };
    const before = await open(schema);
    await before.enqueue([{ id: "stored-at-3", route: "/a", target: "pull", payload: new Uint8Array([1, 2, 3]), headers }]);
    await before.close();
    // Back to schema 3 as it was: headers in jsonb, versions 4 and 5 (runtime_secrets) not applied.
    const sql = schemas.admin;
    await sql.unsafe(`ALTER TABLE "${schema}".messages ALTER COLUMN headers TYPE jsonb USING headers::jsonb`);
    await sql.unsafe(`DROP TABLE "${schema}".runtime_secrets`);
    await sql.unsafe(`DELETE FROM "${schema}".schema_migrations WHERE version >= 4`);

    const after = await open(schema);
    try {
      const [{ data_type }] = await sql`SELECT data_type FROM information_schema.columns WHERE table_schema = ${schema} AND table_name = 'messages' AND column_name = 'headers'`;
      assert.is(data_type, "json");
      const [{ versions }] = await sql.unsafe(`SELECT array_agg(version ORDER BY version) AS versions FROM "${schema}".schema_migrations`);
      assert.equal(versions, [1, 2, 3, 4, 5]);
      assert.equal(await after.listRuntimeSecrets(), [], "migration 5 made runtime_secrets");
      await after.enqueue([{ id: "stored-at-4", route: "/a", target: "pull", payload: new Uint8Array([4]), headers, receivedAtMs: Date.now() + 1 }]);
      const leased = await after.dequeue({ route: "/a", batch: 10, leaseTtlMs: 30_000 });
      assert.equal(leased.map((m) => m.id), ["stored-at-3", "stored-at-4"]);
      assert.equal(leased[0].headers, headers, "the values stored under jsonb");
      assert.equal(Object.keys(leased[1].headers), Object.keys(headers), "stored under json: the order as sent");
    } finally {
      await after.close();
    }
  });
}

test.run();
