// Connects to PostgreSQL with the search_path pinned to Spool's schema, migrates under an advisory
// lock, and maps driver errors to StoreError. The postgres package replaces broken connections on
// its own; a query that hit one fails with `unavailable` and the next call gets a fresh connection.
import postgres from "postgres";
import { StoreError } from "../store.js";
import { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION } from "./migrations.js";

export type Sql = postgres.Sql<{ bigint: number }>;
/** A transaction (or a savepoint within one) of Sql. */
export type Tx = postgres.TransactionSql<{ bigint: number }>;

export interface ConnectOptions {
  dsn: string;
  schema: string;
  poolSize: number;
  nowMs: number;
}

export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

export async function connectPostgres(options: ConnectOptions): Promise<Sql> {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(options.schema)) {
    throw new StoreError("invalid_argument", `postgres schema name ${JSON.stringify(options.schema)} must be a plain identifier`);
  }
  const sql = driverFor(options.dsn, () => postgres(options.dsn, { ...sessionOptions(options.schema, options.dsn), max: options.poolSize }) as unknown as Sql);
  try {
    await migrate(sql, options.schema, options.nowMs);
    return sql;
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw startupStoreError(error, "cannot prepare PostgreSQL schema " + options.schema);
  }
}

/**
 * The driver, or a StoreError when it refuses the DSN's text. The driver throws Node's bare "Invalid URL"
 * (whose `input` holds the whole DSN, password included): the error says what was wrong instead, and
 * neither keeps the text.
 */
function driverFor(dsn: string, open: () => Sql): Sql {
  try {
    return open();
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== "ERR_INVALID_URL") throw error;
    const scheme = /^postgres(?:ql)?:\/\//i.test(dsn) ? "" : " (it does not start with postgres://)";
    throw new StoreError("invalid_argument", `the PostgreSQL DSN is not a valid URL${scheme}: expected postgres://user:password@host:port/database (its text is not shown)`);
  }
}

/**
 * A failure while the store opens. Unlike a call's failure (postgresStoreError) there is no next
 * call to reconnect, and a database that never answered was never "lost": it says which it was.
 */
export function startupStoreError(error: unknown, context: string): StoreError {
  if (error instanceof StoreError || (!isConnectionLoss(error) && !isUnreachable(error))) return postgresStoreError(error, context);
  const detail = error instanceof Error ? error.message : String(error);
  const what = isUnreachable(error) ? "cannot connect to PostgreSQL" : "lost the PostgreSQL connection";
  return new StoreError("unavailable", `${context}: ${what} (${detail})`, undefined, { cause: error });
}

/** The database could not be reached at all: refused, no such host, no route, or no answer in time. */
function isUnreachable(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code ?? "");
  return /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|CONNECT_TIMEOUT)$/.test(code);
}

/**
 * The pool for writes whose commit need not wait for the WAL flush (ack, nack, attempt records: the
 * Store contract's durability note): its sessions run with synchronous_commit=off. It opens its
 * connections only when first used, and a later flushed commit of any session flushes these too.
 */
export function openDeferredPool(options: Omit<ConnectOptions, "nowMs">): Sql {
  const session = sessionOptions(options.schema, options.dsn);
  return postgres(options.dsn, {
    ...session,
    connection: { ...session.connection, application_name: deferredApplicationName(options.schema), synchronous_commit: "off" },
    max: Math.max(1, Math.ceil(options.poolSize / 2)),
  }) as unknown as Sql;
}

/** What pg_stat_activity shows for the deferred pool's sessions (the others show `spool:<schema>`). */
export function deferredApplicationName(schema: string): string {
  return `spool:${schema}`.slice(0, 54) + "/deferred";
}

/**
 * How long opening a session may take, handshake included, before the call waiting for it fails
 * `unavailable`: 5 s, where the driver's default is 30. A database host that accepts connections
 * but never answers (a hung server, a firewall that drops packets) then answers ingress and the
 * Pull API with 503 in about 5 s, inside the timeout of senders such as GitHub (10 s) and of
 * Kubernetes probes, rather than holding every request for half a minute. A `connect_timeout`
 * in the DSN's query, or PGCONNECT_TIMEOUT, still decides (seconds, as libpq reads them).
 */
export const DEFAULT_CONNECT_TIMEOUT_S = 5;

export function connectTimeoutOption(dsn: string): { connect_timeout?: number } {
  let named = process.env.PGCONNECT_TIMEOUT !== undefined;
  try {
    named ||= new URL(dsn).searchParams.has("connect_timeout");
  } catch {
    // Not a URL (the driver reports that itself): the default applies.
  }
  return named ? {} : { connect_timeout: DEFAULT_CONNECT_TIMEOUT_S };
}

/** Options every session of the store uses, the pools' and the wake-up listener's. */
export function sessionOptions(schema: string, dsn: string) {
  return {
    ...connectTimeoutOption(dsn),
    onnotice: () => {},
    // The schema in application_name lets an operator (and the fault tests) find this store's sessions.
    connection: { search_path: schema, application_name: `spool:${schema}`.slice(0, 63) } as Record<string, string>,
    // int8 columns hold epoch ms and counts, all well inside Number's exact range.
    types: { bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) } },
  };
}

/** How long a migration waits for a table lock (PostgreSQL's lock_timeout). */
const MIGRATION_LOCK_TIMEOUT = "10s";

async function migrate(sql: Sql, schema: string, nowMs: number): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${"spool-migrate:" + schema}))`;
    await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${quoteIdent(schema)}.schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)`);
    const [{ current }] = await tx.unsafe(`SELECT coalesce(max(version), 0)::int AS current FROM ${quoteIdent(schema)}.schema_migrations`);
    if (current > POSTGRES_SCHEMA_VERSION) {
      throw new StoreError(
        "schema_too_new",
        `PostgreSQL schema ${schema} has version ${current}, newer than this Spool (${POSTGRES_SCHEMA_VERSION}); refusing to use it`,
      );
    }
    await tx.unsafe(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
    // A migration that rewrites a table (schema 4) waits for the instances still running to let go
    // of it, and while it waits every later query queues behind it: it gives up after a while
    // instead, and this start fails with a message saying so (the next start tries again).
    await tx.unsafe(`SET LOCAL lock_timeout = '${MIGRATION_LOCK_TIMEOUT}'`);
    for (const migration of POSTGRES_MIGRATIONS) {
      if (migration.version <= current) continue;
      await tx.unsafe(migration.sql);
      await tx.unsafe(`INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`, [migration.version, nowMs]);
    }
  });
}

/**
 * How far the PostgreSQL server's clock is ahead of `now` (negative: behind), in ms, measured over
 * one round trip and taken at its middle. Instances sharing a database compare lease and ready
 * times by their own clocks, so each one's offset from the server tells how far they disagree.
 */
export async function measureClockSkewMs(sql: Sql, now: () => number): Promise<number> {
  const sent = now();
  const [{ ms }] = await sql<{ ms: number }[]>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`;
  const answered = now();
  return Math.round(ms - (sent + answered) / 2);
}

/** Unique violations are handled by the caller; everything else means the database is not usable now. */
export function postgresStoreError(error: unknown, context: string): StoreError {
  if (error instanceof StoreError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  const what = isConnectionLoss(error) ? `lost the PostgreSQL connection (${detail}); the next call reconnects` : detail;
  return new StoreError("unavailable", `${context}: ${what}`, undefined, { cause: error });
}

/**
 * A killed or dropped session: SQLSTATE class 08 (connection exception), 57P01-57P03 (terminated by
 * an administrator, a crash or a restart), or the driver's own codes for a closed or unreachable socket.
 */
export function isConnectionLoss(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code ?? "");
  return /^08|^57P0[123]$|^CONNECTION_(CLOSED|DESTROYED)$|^CONNECT_TIMEOUT$|^ECONN|^EPIPE$|^ETIMEDOUT$/.test(code);
}
