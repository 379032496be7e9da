// Instances sharing PostgreSQL compare lease and ready times by their own clocks (README
// "Decisions"), so opening the store measures this host's offset from the server's clock and
// reports one past the tolerance; `spool run` logs it as `clock_skew`.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { systemClock, TestClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { CLOCK_SKEW_WARN_MS } from "../../runtime/store/postgres/store.js";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";

const dsn = postgresTestDsn();
const test = suite("postgres: clock skew");

if (!dsn) {
  reportSkipped("postgres: clock skew", 2, "SPOOL_TEST_POSTGRES_DSN is not set");
} else {
  const schemas = new PgSchemas(dsn, "spool_clock");
  test.after(() => schemas.dropAll());

  const openWith = async (clock: TestClock | typeof systemClock): Promise<number[]> => {
    const reported: number[] = [];
    const store = await openStore(
      { backend: "postgres", postgresDsn: dsn, postgresSchema: schemas.next(), postgresPoolSize: 1 },
      { clock, onClockSkew: (skewMs) => reported.push(skewMs) },
    );
    await store.close();
    return reported;
  };

  test("a host clock 5 s behind the server's is reported, with the server ahead by about 5 s", async () => {
    const reported = await openWith(new TestClock(Date.now() - 5_000));
    assert.is(reported.length, 1);
    assert.ok(Math.abs(reported[0] - 5_000) < 1_000, String(reported[0]));
  });

  test("a host clock that agrees with the server's is not reported", async () => {
    const reported = await openWith(systemClock);
    assert.equal(reported, [], `tolerance ${CLOCK_SKEW_WARN_MS} ms`);
  });
}

test.run();
