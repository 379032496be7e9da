// Child of postgres-killed-under-load.test.ts: three rounds of 2,000 concurrent one-message enqueues
// on a PostgreSQL store while every session of its schema is killed six times, 40 ms apart. Prints
// {ok, refused, other, acceptedButMissing, refusedButStored} and exits 0; a crash (an exception no caller could catch) exits otherwise.
import postgres from "postgres";
import { systemClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";

const [dsn, schema] = process.argv.slice(2);
const store = await openStore({ backend: "postgres", postgresDsn: dsn, postgresSchema: schema, postgresPoolSize: 8 }, { clock: systemClock });
const admin = postgres(dsn, { max: 1, onnotice: () => {} });
const counts = { ok: 0, refused: 0, other: 0, acceptedButMissing: 0, refusedButStored: 0 };
const accepted: string[] = [];
const refused: string[] = [];
const kill = async () => {
  for (let i = 0; i < 6; i++) {
    await new Promise((resolve) => setTimeout(resolve, 40));
    await admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE ${`spool:${schema}%`}`;
  }
};
// Three rounds: the crash this guards against needs a close to land between a small write and its
// flush, which one round hits about two times in three.
for (let round = 0; round < 3; round++) {
  const load = Array.from({ length: 2_000 }, async (_, i) => {
    await new Promise((resolve) => setTimeout(resolve, i % 200));
    const id = `m${round}-${i}`;
    try {
      await store.enqueue([{ id, route: "/a", target: "pull", payload: new Uint8Array(100), headers: {} }]);
      counts.ok++;
      accepted.push(id);
    } catch (error) {
      if ((error as { code?: string }).code === "unavailable") {
        counts.refused++;
        refused.push(id);
      } else counts.other++;
    }
  });
  await Promise.all([kill(), ...load]);
}
// An accepted enqueue is stored; a refused one is not, even when its session died in its COMMIT.
const stored = new Set((await admin.unsafe(`SELECT id FROM "${schema}".messages`)).map((row) => row.id as string));
counts.acceptedButMissing = accepted.filter((id) => !stored.has(id)).length;
counts.refusedButStored = refused.filter((id) => stored.has(id)).length;
await store.close();
await admin.end();
console.log(JSON.stringify(counts));
