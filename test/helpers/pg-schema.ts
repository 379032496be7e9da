// Fresh PostgreSQL schemas for tests: unique names per process, dropped together at the end, and
// one connection for the suite's own queries (closed with the schemas).
import postgres from "postgres";

export class PgSchemas {
  private readonly created: string[] = [];
  private counter = 0;
  private adminSql: postgres.Sql | undefined;

  constructor(
    readonly dsn: string,
    private readonly prefix: string,
  ) {}

  /** A new schema name (the store creates the schema itself when it opens). */
  next(): string {
    const name = `${this.prefix}_${process.pid}_${++this.counter}`;
    this.created.push(name);
    return name;
  }

  /** A connection for the suite's own queries (EXPLAIN, pg_stat_activity, pg_terminate_backend); dropAll closes it. */
  get admin(): postgres.Sql {
    return (this.adminSql ??= postgres(this.dsn, { max: 2, onnotice: () => {} }));
  }

  async dropAll(): Promise<void> {
    const sql = this.admin;
    this.adminSql = undefined;
    try {
      for (const name of this.created) await sql.unsafe(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }
}
