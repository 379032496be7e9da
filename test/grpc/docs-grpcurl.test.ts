import { readdirSync, readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath } from "../helpers/repo.js";

// The gRPC worker service offers no reflection (docs/grpc.md), so a grpcurl command a page shows works only
// when it loads the .proto itself. docs/workers.md once showed one without, which grpcurl refuses.
const test = suite("grpcurl commands in the docs");

/** Every `grpcurl …` command of the docs' code blocks, continuation lines joined. */
function grpcurlCommands(): { where: string; command: string }[] {
  const found: { where: string; command: string }[] = [];
  for (const name of readdirSync(repoPath("docs")).filter((n) => n.endsWith(".md"))) {
    const lines = readFileSync(repoPath("docs", name), "utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!/^\s*grpcurl\s/.test(lines[i])) continue;
      let command = lines[i];
      for (let j = i; lines[j].trimEnd().endsWith("\\") && j + 1 < lines.length; j++) command += ` ${lines[j + 1]}`;
      found.push({ where: `docs/${name}:${i + 1}`, command });
    }
  }
  return found;
}

test("there are grpcurl commands, and each loads the service's .proto", () => {
  const commands = grpcurlCommands();
  assert.ok(commands.length >= 3, `found ${commands.length}`);
  const without = commands.filter((c) => !/-import-path proto -proto spool\/worker\/v1\/worker\.proto/.test(c.command)).map((c) => c.where);
  assert.equal(without, []);
  const proto = readFileSync(repoPath("proto", "spool", "worker", "v1", "worker.proto"), "utf8");
  assert.match(proto, /service WorkerService/);
});

test.run();
