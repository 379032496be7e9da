import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { spoolBin } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";

// `spool config validate FILE…`: the file names pre-commit passes (docs/cli.md, docs/editors.md).
const temp = makeTempDir("validate-files");
process.on("exit", () => temp.cleanup());
const valid = join(temp.path, "valid.spool");
const invalid = join(temp.path, "invalid.spool");
writeFileSync(valid, "ingress {\n  listen :8080\n}\n");
writeFileSync(invalid, "ingress {\n  lisen :8080\n}\n");

function spool(...args: string[]) {
  const run = spawnSync(process.execPath, [spoolBin, ...args], { encoding: "utf8", cwd: temp.path });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

const files = suite("config validate FILE…");

files("each file is validated in turn; the exit code is the worst", () => {
  assert.equal(spool("config", "validate", valid, valid), { code: 0, stdout: `${valid}: valid\n${valid}: valid\n`, stderr: "" });
  const mixed = spool("config", "validate", invalid, valid);
  assert.is(mixed.code, 1);
  assert.is(mixed.stdout, `${valid}: valid\n`);
  assert.match(mixed.stderr, `${invalid}:2:3: unknown directive "lisen" in ingress (did you mean "listen"?)`);
  assert.match(mixed.stderr, `${invalid}: 1 error`);
});

files("one file with --format json is the same document as --config FILE; several are a usage error", () => {
  assert.equal(spool("config", "validate", invalid, "--format", "json"), spool("config", "validate", "--config", invalid, "--format", "json"));
  const several = spool("config", "validate", valid, invalid, "--format", "json");
  assert.equal(several, { code: 2, stdout: "", stderr: "spool: config validate: --format json validates one file at a time\n" });
});

files.run();
