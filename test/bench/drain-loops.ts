// The in-process drain references of the `ingress` benchmark (issue 26): the lease + delete loop a
// drain comes down to, run in the benchmark's own process against its own table, with no HTTP and
// none of Spool's work. Spool's Pull API drain is printed beside them, on the same messages (count
// and 1 KB body) and with Spool's durability: a lease commits durably, an ack need not wait for it
// (synchronous=NORMAL on SQLite, synchronous_commit=off on PostgreSQL, as Spool's deferred writes).
import Database from "better-sqlite3";
import { join } from "node:path";
import postgres from "postgres";
import { PgBackendCpu } from "./pg-backend-cpu.js";

export interface DrainResult {
  messages: number;
  perSecond: number;
  /** CPU (user + system) of this process per message, µs: the loop's own, not its database's. */
  cpuUsPerUnit?: number | null;
  /** PostgreSQL: the CPU of the database's backends per message, µs (pg-backend-cpu.ts). */
  databaseCpuUsPerUnit?: number | null;
}

function finished(drained: number, started: number, cpuBefore: NodeJS.CpuUsage): DrainResult {
  const cpu = process.cpuUsage(cpuBefore);
  return { messages: drained, perSecond: drained / ((performance.now() - started) / 1000), cpuUsPerUnit: drained ? (cpu.user + cpu.system) / drained : null };
}

const BATCH = 32;

/**
 * SQLite: `count` rows of `body`, then one loop (SQLite writes one at a time, so more consumers in
 * one process would only take turns) leasing BATCH rows with UPDATE … RETURNING (synchronous=FULL)
 * and deleting them by id (synchronous=NORMAL), each in its own transaction, until none is left.
 */
export function sqliteDrainLoop(dir: string, count: number, body: string): DrainResult {
  const db = new Database(join(dir, "drain-loop.db"));
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.exec(`CREATE TABLE q (id INTEGER PRIMARY KEY, route TEXT NOT NULL, state TEXT NOT NULL, next_run_at INTEGER NOT NULL, payload BLOB NOT NULL, lease_id TEXT);
             CREATE INDEX q_ready ON q (route, next_run_at) WHERE state = 'queued';`);
    const insert = db.prepare("INSERT INTO q (route, state, next_run_at, payload) VALUES ('/bench', 'queued', 0, ?)");
    const payload = Buffer.from(body);
    db.transaction(() => {
      for (let i = 0; i < count; i++) insert.run(payload);
    })();
    db.pragma("wal_checkpoint(TRUNCATE)");
    const lease = db.prepare(
      `UPDATE q SET state = 'leased', lease_id = 'l' || id WHERE id IN
         (SELECT id FROM q WHERE state = 'queued' AND route = '/bench' AND next_run_at <= 1 ORDER BY next_run_at LIMIT ?)
       RETURNING id, lease_id, payload`,
    );
    const ack = db.prepare("DELETE FROM q WHERE id IN (SELECT value FROM json_each(?))");
    const leaseTx = db.transaction(() => lease.all(BATCH) as { id: number }[]);
    const ackTx = db.transaction((ids: string) => ack.run(ids));
    let drained = 0;
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    for (;;) {
      const rows = leaseTx.immediate();
      if (rows.length === 0) break;
      db.pragma("synchronous = NORMAL");
      ackTx.immediate(JSON.stringify(rows.map((r) => r.id)));
      db.pragma("synchronous = FULL");
      drained += rows.length;
    }
    return finished(drained, started, cpuBefore);
  } finally {
    db.close();
  }
}

/**
 * PostgreSQL: `count` rows of `body` in `schema`, then `consumers` concurrent loops, each leasing
 * BATCH rows (UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED LIMIT 32) RETURNING) and
 * deleting them (DELETE … WHERE id = ANY(…), on sessions with synchronous_commit=off), until none is
 * left. The schema is dropped afterwards.
 */
export async function postgresDrainLoop(dsn: string, schema: string, count: number, body: string, consumers = 4): Promise<DrainResult> {
  const options = { max: consumers, onnotice: () => {}, connection: { search_path: schema } };
  const sql = postgres(dsn, options);
  const deferred = postgres(dsn, { ...options, connection: { ...options.connection, synchronous_commit: "off" } });
  try {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; CREATE SCHEMA "${schema}"`);
    await sql.unsafe(`CREATE TABLE q (id bigserial PRIMARY KEY, route text NOT NULL, state text NOT NULL, next_run_at int8 NOT NULL, payload bytea NOT NULL, lease_id text);
                      CREATE INDEX q_ready ON q (route, next_run_at) WHERE state = 'queued'`);
    await sql`INSERT INTO q (route, state, next_run_at, payload) SELECT '/bench', 'queued', 0, convert_to(${body}, 'UTF8') FROM generate_series(1, ${count})`;
    await sql.unsafe("VACUUM ANALYZE q");
    const backends = new PgBackendCpu(dsn);
    await backends.start();
    let drained = 0;
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const consumer = async () => {
      for (;;) {
        const rows = await sql`
          UPDATE q SET state = 'leased', lease_id = 'l' || q.id
          WHERE q.id IN (SELECT id FROM q WHERE state = 'queued' AND route = '/bench' AND next_run_at <= 1 ORDER BY next_run_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
          RETURNING q.id, q.lease_id, q.payload`;
        if (rows.length === 0) return;
        await deferred`DELETE FROM q WHERE id = ANY(${rows.map((r) => r.id as string)}::int8[])`;
        drained += rows.length;
      }
    };
    await Promise.all(Array.from({ length: consumers }, consumer));
    const result = finished(drained, started, cpuBefore);
    const databaseMs = await backends.stop();
    return { ...result, databaseCpuUsPerUnit: databaseMs === null || drained === 0 ? null : (databaseMs * 1000) / drained };
  } finally {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await Promise.all([sql.end({ timeout: 5 }), deferred.end({ timeout: 5 })]);
  }
}
