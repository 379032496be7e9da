// Reports a whole suite as skipped, by name, in the form test/run.ts counts.
export function reportSkipped(suiteName: string, testCount: number, reason: string): void {
  process.stdout.write(`spool-test-skipped: ${testCount} ${suiteName}: ${reason}\n`);
}

/** The PostgreSQL DSN for tests, or undefined (then Postgres suites report themselves skipped). */
export function postgresTestDsn(): string | undefined {
  const dsn = process.env.SPOOL_TEST_POSTGRES_DSN;
  return dsn && dsn.trim() !== "" ? dsn : undefined;
}
