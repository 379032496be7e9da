// Fresh PostgreSQL schemas for tests: unique names per process, dropped together at the end.
import postgres from "postgres";

export class PgSchemas {
  private readonly created: string[] = [];
  private counter = 0;

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

  async dropAll(): Promise<void> {
    const sql = postgres(this.dsn, { max: 1, onnotice: () => {} });
    try {
      for (const name of this.created) await sql.unsafe(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }
}
