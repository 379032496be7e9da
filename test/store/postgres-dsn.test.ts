import { suite } from "uvu";
import * as assert from "uvu/assert";
import { connectPostgres } from "../../runtime/store/postgres/connect.js";
import { StoreError } from "../../runtime/store/store.js";

// A DSN the driver cannot parse fails before any connection is tried, so no database is needed. The
// driver's own error was Node's bare "Invalid URL", with the whole DSN (password included) on `input`.
const test = suite("postgres DSN that is not a URL");

async function refusal(dsn: string): Promise<StoreError> {
  try {
    await connectPostgres({ dsn, schema: "spool", poolSize: 1, nowMs: 0 });
  } catch (error) {
    assert.instance(error, StoreError);
    return error as StoreError;
  }
  throw new Error("connectPostgres accepted the DSN");
}

test("the error says what is wrong and keeps none of the DSN's text", async () => {
  const notUrl = await refusal("host=db password=Hunter2Secret");
  assert.is(notUrl.code, "invalid_argument");
  assert.is(notUrl.message, "the PostgreSQL DSN is not a valid URL (it does not start with postgres://): expected postgres://user:password@host:port/database (its text is not shown)");
  const badPort = await refusal("postgres://spool:Hunter2Secret@db:notaport/spool");
  assert.is(badPort.message, "the PostgreSQL DSN is not a valid URL: expected postgres://user:password@host:port/database (its text is not shown)");
  for (const error of [notUrl, badPort]) {
    assert.not.match(JSON.stringify({ ...error, message: error.message, cause: error.cause }), "Hunter2Secret");
  }
});

test.run();
