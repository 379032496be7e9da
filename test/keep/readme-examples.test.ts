// keep/README.md's worked examples stay true to the code: the workflow uses exactly the action's
// inputs, the Dockerfile's ENTRYPOINT is a `keep exec` the CLI accepts up to the connection, the
// TypeScript snippet uses the library's exports, and no example disables TLS verification.
import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import * as lib from "../../keep/client/index.js";
import { repoPath } from "../helpers/repo.js";
import { runKeep } from "./consumer-harness.js";

const test = suite("keep README examples");
const readme = readFileSync(repoPath("keep", "README.md"), "utf8");
const blocks = (lang: string): string[] => [...readme.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]);

test("one worked example per route: workflow (yaml), Dockerfile, TypeScript, curl", () => {
  assert.ok(blocks("yaml").some((b) => b.includes("/keep/action@")));
  assert.ok(blocks("dockerfile").some((b) => b.includes('ENTRYPOINT ["keep", "exec"')));
  assert.ok(blocks("ts").some((b) => b.includes("new KeepClient(")));
  assert.ok(blocks("sh").some((b) => b.startsWith("curl --cacert")));
  const code = [...readme.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]).join("\n");
  assert.not.match(code, /(^|\s)(-k|--insecure)(\s|$)|NODE_TLS_REJECT_UNAUTHORIZED/m, "no example disables verification");
});

test("the workflow passes exactly the action's inputs", () => {
  const action = readFileSync(repoPath("keep", "action", "action.yml"), "utf8");
  const inputs = [...action.slice(action.indexOf("inputs:"), action.indexOf("runs:")).matchAll(/^ {2}([a-z0-9-]+):$/gm)].map((m) => m[1]).sort();
  const workflow = blocks("yaml").find((b) => b.includes("/keep/action@")) as string;
  const withBlock = workflow.slice(workflow.indexOf("with:"), workflow.indexOf("- run:"));
  const given = [...withBlock.matchAll(/^ {10}([a-z0-9-]+):/gm)].map((m) => m[1]).sort();
  assert.equal(given, inputs.filter((i) => i !== "binary"));
  assert.match(withBlock, /token: \$\{\{ secrets\.[A-Z_]+ \}\}/, "the token comes from a secret");
});

test("the Dockerfile's ENTRYPOINT is a keep exec that gets past flag parsing (125 only at the token file)", async () => {
  const docker = blocks("dockerfile")[0].replace(/\\\n\s*/g, "");
  const entry = JSON.parse(/ENTRYPOINT (\[.*\])/.exec(docker)![1]) as string[];
  assert.is(entry[0], "keep");
  assert.is(entry[1], "exec");
  assert.equal(entry.slice(-2), ["--", "/app/server"]);
  const r = await runKeep(entry.slice(1));
  assert.is(r.status, 125);
  assert.match(r.stderr, /CA file \/run\/secrets\/keep-ca\.pem|token file \/run\/secrets\/keep-token/, r.stderr);
});

test("the TypeScript example names only the library's exports", () => {
  const ts = blocks("ts").join("\n");
  for (const m of ts.matchAll(/import \{([^}]+)\} from "spool\/keep"/g)) {
    for (const name of m[1].split(",").map((x) => x.trim())) assert.ok(name in lib, `${name} is exported`);
  }
});

test.run();
