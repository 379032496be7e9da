// Route D: the curl command in keep/README.md, run as written by bash against `keep serve --dev`,
// returns the demo value; the server printed that same command; --dev wrote a throwaway CA, a
// 0600 token file and a demo policy under ./.data/keep/.
import { spawnSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { DEMO_SECRETS } from "../../keep/cli/dev.js";
import { repoPath } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { startChild } from "./keep-helpers.js";

const test = suite("keep serve --dev and route D");

function readmeCurl(): string {
  const line = readFileSync(repoPath("keep", "README.md"), "utf8")
    .split("\n")
    .find((l) => l.startsWith("curl --cacert .data/keep/ca.pem"));
  if (!line) throw new Error("keep/README.md has no dev-mode curl command");
  return line;
}

test("the README's curl command, run as written, returns the demo value", async () => {
  const tmp = makeTempDir("keep-dev");
  const srv = await startChild(["serve", "--dev"], tmp.path);
  try {
    const command = readmeCurl();
    assert.not.match(command, /\s(-k|--insecure)\b/);
    const out = spawnSync("bash", ["-c", command], { cwd: tmp.path, encoding: "utf8" });
    assert.is(out.status, 0, out.stderr);
    assert.equal(JSON.parse(out.stdout), { value: DEMO_SECRETS["demo/app/DB_PASSWORD"] });
    const dir = join(tmp.path, ".data", "keep");
    assert.is(statSync(join(dir, "demo.token")).mode & 0o777, 0o600);
    assert.is(statSync(join(dir, "server-key.pem")).mode & 0o777, 0o600);
    assert.is(statSync(join(dir, "data")).mode & 0o777, 0o700);
    const token = readFileSync(join(dir, "demo.token"), "utf8").trim();
    assert.not.ok(srv.stderr().includes(token) || srv.stdout().includes(token), "the token is never printed");
    while (!srv.stdout().includes("\n", srv.stdout().indexOf("curl "))) await delay(20);
    assert.ok(srv.stdout().split("\n").includes(command), `--dev prints the README's command:\n${srv.stdout()}`);
  } finally {
    await srv.stop();
  }
  tmp.cleanup();
});

test.run();
