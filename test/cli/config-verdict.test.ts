// One verdict between `config validate` and `spool run`, and the structured diagnostics both print:
// the built binary as a subprocess on real files, as an operator or CI would run it.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { spoolBin } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";

function spool(args: string[]): { code: number; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.SPOOL_VERDICT_UNSET;
  const result = spawnSync(process.execPath, [spoolBin, ...args], { encoding: "utf8", env, timeout: 20_000 });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

const temp = makeTempDir("verdict");
process.on("exit", () => temp.cleanup());
const file = (name: string, text: string) => {
  const path = join(temp.path, name);
  writeFileSync(path, text);
  return path;
};

const unsetSecret = file("unset.spool", '/a {\n  auth token env:SPOOL_VERDICT_UNSET\n  deliver "https://h.example/in?token=VerdictT0k"\n}\n');
const typos = file(
  "typos.spool",
  '/gh {\n  auth hmac { provider gihub; secret raw:VerdictHmacKey }\n  deliver "https://h.example/in" { timout 5s }\n}\n/pulled {\n  pull { path /pulled; auth token ghp_VerdictBare }\n}\n',
);

const cli = suite("config verdict");

cli("an unset secret: validate warns that spool run refuses it, and spool run does", () => {
  const validate = spool(["config", "validate", "--config", unsetSecret]);
  assert.is(validate.code, 0);
  assert.match(validate.stderr, `${unsetSecret}:2:14: warning: auth token: environment variable SPOOL_VERDICT_UNSET is not set; spool run refuses to start or reload with it`);
  assert.match(validate.stdout, "valid (1 warning), but spool run refuses it as it stands: the warning names a file or secret it cannot use");
  assert.is(spool(["config", "validate", "--strict-secrets", "--config", unsetSecret]).code, 1);
  const run = spool(["run", "--config", unsetSecret, "--db", join(temp.path, "unset.db")]);
  assert.is(run.code, 1);
  assert.match(run.stderr, `${unsetSecret}:2:14: environment variable not set: route /a › auth › token: expected environment variable SPOOL_VERDICT_UNSET to be set`);
  assert.not.match(run.stderr, "VerdictT0k");
});

cli("config validate --format json: each entry has its code, subject, expected, found and suggestion", () => {
  const { code, stdout } = spool(["config", "validate", "--config", typos, "--format", "json"]);
  assert.is(code, 1);
  const report = JSON.parse(stdout) as { errors: Record<string, unknown>[]; warnings: Record<string, unknown>[] };
  const strip = ({ file: _file, message: _message, ...rest }: Record<string, unknown>) => rest;
  assert.equal(report.errors.map(strip), [
    { line: 2, col: 24, code: "expected_enum", subject: "route /gh › auth › hmac › provider", expected: "one of github, gitea, forgejo, stripe, cituro, standard_webhooks", found: "gihub", suggestion: "github" },
    { line: 3, col: 36, code: "unknown_directive", subject: "route /gh › deliver", expected: "one of: retry, timeout, header, sign", found: "timout", suggestion: "timeout" },
    { line: 6, col: 35, code: "expected_secret_source", subject: "route /pulled › pull › auth", expected: "a secret source env:NAME, file:PATH or raw:VALUE", found: "ghp_VerdictBare" },
  ]);
  const unset = JSON.parse(spool(["config", "validate", "--config", unsetSecret, "--format", "json"]).stdout) as { ok: boolean; warnings: { code: string }[] };
  assert.equal([unset.ok, unset.warnings.map((w) => w.code)], [true, ["env_unset"]]);
});

cli("spool run: one log-safe line per mistake, with the did-you-mean, and no value of the file", () => {
  const run = spool(["run", "--config", typos, "--db", join(temp.path, "typos.db")]);
  assert.is(run.code, 1);
  assert.equal(run.stderr.trim().split("\n"), [
    `${typos}:2:24: invalid choice: route /gh › auth › hmac › provider: expected one of github, gitea, forgejo, stripe, cituro, standard_webhooks (did you mean "github"?)`,
    `${typos}:3:36: unknown directive: route /gh › deliver: expected one of: retry, timeout, header, sign (did you mean "timeout"?)`,
    `${typos}:6:35: invalid secret source: route /pulled › pull › auth: expected a secret source env:NAME, file:PATH or raw:VALUE`,
    "(values of the file are not shown here; `spool config validate` shows them)",
  ]);
});

cli.run();
