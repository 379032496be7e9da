import { suite } from "uvu";
import { openStore } from "../../runtime/store/open.js";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";
import { contractTestCount, storeContract } from "./contract.js";

const dsn = postgresTestDsn();
if (!dsn) {
  storeContract("postgres", () => Promise.reject(new Error("unreachable")));
  reportSkipped("store contract: postgres", contractTestCount, "SPOOL_TEST_POSTGRES_DSN is not set");
  // uvu prints the summary block the runner reads only when a suite runs.
  suite("store contract: postgres (skipped)").run();
} else {
  const schemas = new PgSchemas(dsn, "spool_contract");
  const contract = storeContract("postgres", (clock, options, observer) =>
    openStore({ backend: "postgres", postgresDsn: dsn, postgresSchema: schemas.next(), postgresPoolSize: 4, ...options }, { clock, observer }),
  );
  contract.after(() => schemas.dropAll());
  contract.run();
}
