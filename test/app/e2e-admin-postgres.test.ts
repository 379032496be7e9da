// The Admin API of the built `spool run --postgres-dsn` (a fresh schema per run): the scenarios of
// test/app/e2e-admin.test.ts that lean on the store — lifecycle by ids and the DLQ, filter preview
// vs execute, atomic publish batches, backlog analytics, and attempts of a dead push delivery.
import { join } from "node:path";
import { suite } from "uvu";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import {
  adminRoutes,
  adminRun,
  backlogEndpoints,
  filterPreviewThenExecute,
  lifecycleByIdsAndDlq,
  publishBatches,
  pushDeadLetter,
  startRefusingReceiver,
  type AdminRun,
} from "./helpers/admin-scenarios.js";
import { spawnSpool, stopSpool, waitHealthy } from "./helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "./helpers/spoolfile.js";

const SUITE = "spool run: Admin API end to end on PostgreSQL";
const dsn = postgresTestDsn();
const SCENARIOS: [string, (run: AdminRun) => Promise<unknown>][] = [
  ["lifecycle by ids and the DLQ: requeue, delete, cancel, resume with exact counts", lifecycleByIdsAndDlq],
  ["filter mutations: preview counts and changes nothing, execute changes exactly limit", filterPreviewThenExecute],
  ["publish: a refused batch names item_index and writes nothing", publishBatches],
  ["backlog: top_queued, oldest_queued, aging_summary and trends", backlogEndpoints],
  ["a push answered 400 is dead with no_retry, in the DLQ and in GET /attempts", pushDeadLetter],
];

if (!dsn) {
  reportSkipped(SUITE, SCENARIOS.length, "SPOOL_TEST_POSTGRES_DSN is not set");
  // uvu prints the summary block the runner reads only when a suite runs.
  suite(`${SUITE} (skipped)`).run();
} else {
  const temp = makeTempDir("e2e-admin-pg");
  const schemas = new PgSchemas(dsn, "spool_e2e_admin");
  const test = suite(SUITE);
  let receiver: Awaited<ReturnType<typeof startRefusingReceiver>>;
  let run: AdminRun | undefined;

  test.before(async () => {
    receiver = await startRefusingReceiver();
    const ports = await freePorts();
    const config = writeSpoolfile(temp.path, spoolfileText(ports, adminRoutes(receiver.url, { backend: "postgres" })));
    const proc = spawnSpool(["run", "--config", config, "--db", join(temp.path, "unused.db"), "--postgres-dsn", dsn], {
      env: { SPOOL_POSTGRES_SCHEMA: schemas.next() },
    });
    run = adminRun(proc, urls(ports), receiver.url);
    try {
      await waitHealthy(proc, run.urls.admin, 30_000);
    } catch (error) {
      // uvu does not print a failing `before`; the error carries the process output.
      console.error(error);
      throw error;
    }
  });

  test.after(async () => {
    if (run) await stopSpool(run.proc);
    receiver?.close();
    await schemas.dropAll();
    temp.cleanup();
  });

  for (const [name, scenario] of SCENARIOS) test(name, () => scenario(run!).then(() => undefined));

  test.run();
}
