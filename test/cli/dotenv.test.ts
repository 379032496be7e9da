// `spool run --dotenv`: KEY=value lines loaded into the environment before the config compiles.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { parseDotenv } from "../../cli/commands/run.js";
import { spoolBin } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";

const test = suite("spool run --dotenv");
const temp = makeTempDir("dotenv");
process.on("exit", () => temp.cleanup());

test("KEY=value lines, an export prefix, quotes (double ones with escapes), comments and blank lines", () => {
  const values = parseDotenv(
    ["# tokens", "", "PULL_TOKEN=abc123", "export ADMIN_TOKEN = 'x y'", 'MULTI="a\\nb \\"q\\""', "EMPTY=", "  SPACED=v  "].join("\n"),
  );
  assert.equal([...values], [
    ["PULL_TOKEN", "abc123"],
    ["ADMIN_TOKEN", "x y"],
    ["MULTI", 'a\nb "q"'],
    ["EMPTY", ""],
    ["SPACED", "v"],
  ]);
});

test("a line that is not KEY=value is refused by its number, without its text (often a secret whose = was lost)", () => {
  assert.throws(() => parseDotenv("OK=1\nAPI_TOKEN Zq7SECRETmark\n"), (error: Error) => error.message === "line 2 is not a KEY=value line");
  const env = join(temp.path, "bad.env");
  writeFileSync(env, "OK=1\nAPI_TOKEN Zq7SECRETmark\n");
  const run = spawnSync(process.execPath, [spoolBin, "run", "--dotenv", env, "--config", join(temp.path, "missing.spool")], { encoding: "utf8", timeout: 30_000 });
  assert.is(run.status, 1);
  assert.match(run.stderr, `--dotenv ${env}: line 2 is not a KEY=value line`);
  assert.not.match(run.stderr, "Zq7SECRETmark");
});

test.run();
