// The release workflow cannot run here; what it relies on is checked: it runs on vX.Y.Z tags, builds
// Keep's executable on an amd64 and an arm64 runner, hands both to `npm run release` with flags the
// script knows, and passes the signing key only through env: (no expression inside a run: line).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath } from "../helpers/repo.js";

const test = suite("release workflow");
const workflow = readFileSync(repoPath(".github", "workflows", "release.yml"), "utf8");

test("on vX.Y.Z tags; Keep's executable on ubuntu-24.04 and ubuntu-24.04-arm; one release job uploads", () => {
  assert.match(workflow, /on:\n {2}push:\n {4}tags: \["v\[0-9\]\+\.\[0-9\]\+\.\[0-9\]\+"\]/);
  assert.match(workflow, /runner: \[ubuntu-24\.04, ubuntu-24\.04-arm\]/);
  assert.match(workflow, /run: npm run build:keep-binary -- --out keep-bin --version "\$\{GITHUB_REF_NAME#v\}"/);
  assert.match(workflow, /needs: keep-binary/);
  assert.match(workflow, /gh release create "\$GITHUB_REF_NAME" release\/\* --verify-tag/);
  // Before uploading, the release is verified with the key committed to the repository.
  assert.match(workflow, /verify-release --checksums "release\/spool_\$\{v\}_checksums\.txt" \\\n\s+--signature "release\/spool_\$\{v\}_checksums\.txt\.sig" --public-key docs\/release-key\.pub\.pem/);
});

test("npm run release gets flags the script knows, both architectures, the key only through env:", () => {
  const command = /npm run release -- ([^\n]+\n[^\n]+)/.exec(workflow)![1];
  const help = spawnSync(process.execPath, [repoPath("scripts", "release", "release.mjs"), "--help"], { encoding: "utf8" }).stdout;
  for (const flag of command.match(/--[a-z-]+/g)!) assert.ok(help.includes(flag), `${flag} is a release flag`);
  assert.ok(command.includes("--keep-binary keep-bin/keep-linux-amd64 --keep-binary keep-bin/keep-linux-arm64"));
  assert.match(workflow, /env:\n {10}SPOOL_RELEASE_SIGNING_KEY: \$\{\{ secrets\.SPOOL_RELEASE_SIGNING_KEY \}\}/);
  // Every line of every run: block (after `run:`, up to the next key of the step).
  const runText = [...workflow.matchAll(/run: ?[|>]?-?\n?((?:.*\n)*?)(?=\s+(?:- |[a-z-]+:)|$)/g)].map((m) => m[0]).join("\n");
  assert.ok(runText.includes("npm run release") && runText.includes("gh release create"));
  assert.not.ok(runText.includes("${{"), "no expression inside run:");
});

test.run();
