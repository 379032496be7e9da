// `npm run bench`: runs every compiled `*.bench.js` here, one after another (benchmarks must not
// share the two cores), and prints their figures. Pass a substring to run only matching ones.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv[2] ?? "";
const benches = readdirSync(here).filter((f) => f.endsWith(".bench.js") && f.includes(filter)).sort();
let failed = 0;
for (const bench of benches) {
  process.stdout.write(`\n=== ${bench.replace(/\.bench\.js$/, "")} ===\n`);
  const result = spawnSync(process.execPath, ["--expose-gc", join(here, bench)], { stdio: "inherit", env: process.env });
  if (result.status !== 0) {
    failed++;
    process.stdout.write(`${bench} exited with ${result.status ?? result.signal}\n`);
  }
}
process.stdout.write(`\n${benches.length} benchmarks run, ${failed} failed\n`);
process.exitCode = failed ? 1 : 0;
