// What a program or worker receives is what the docs say it receives: every SPOOL_* variable a real
// `deliver exec` program gets is documented in docs/delivery.md, and a pulled message's header names
// come back canonicalised exactly as docs/api.md's example shows (X-GitHub-Event → X-Github-Event).
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { postWebhook, waitForAttempts } from "./helpers/delivery.js";
import { eventually, pullCall } from "./helpers/http.js";
import { spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "./helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "./helpers/spoolfile.js";

const tmp = makeTempDir("docs-contract");
process.on("exit", () => tmp.cleanup());
const envDump = join(tmp.path, "env.txt");
const program = join(tmp.path, "dump-env.sh");
writeFileSync(program, `#!/bin/sh\ncat > /dev/null\nenv > "${envDump}"\nexit 0\n`);
chmodSync(program, 0o755);

const test = suite("docs describe what programs and workers receive");
let spool: SpoolProcess;
let base: ReturnType<typeof urls>;

test.before(async () => {
  const ports = await freePorts();
  base = urls(ports);
  const body = `
/hooks/exec {
  deliver exec "${program}"
}
/hooks/pull {
  pull { path /jobs }
}`;
  const config = writeSpoolfile(tmp.path, spoolfileText(ports, body));
  spool = spawnSpool(["run", "--config", config, "--db", join(tmp.path, "spool.db")]);
  await waitHealthy(spool, base.admin);
});

test.after(async () => {
  await stopSpool(spool);
});

test("every SPOOL_* variable an exec program receives is documented in docs/delivery.md", async () => {
  const [id] = await postWebhook(base.ingress, "/hooks/exec", "{}", { "content-type": "application/json", "x-request-id": "req-1" });
  await waitForAttempts(base.admin, "/hooks/exec", id, 1, "the exec attempt");
  const env = await eventually(() => {
    try {
      return readFileSync(envDump, "utf8");
    } catch {
      return undefined;
    }
  });
  const names = [...env.matchAll(/^(SPOOL_[A-Z0-9_]+)=/gm)].map((m) => m[1].replace(/^SPOOL_HEADER_.*/, "SPOOL_HEADER_"));
  assert.ok(names.includes("SPOOL_MESSAGE_ID") && names.includes("SPOOL_HEADER_"), `the program saw ${names.join(", ")}`);
  const doc = readFileSync(repoPath("docs", "delivery.md"), "utf8");
  const undocumented = [...new Set(names)].filter((name) => !doc.includes(name));
  assert.equal(undocumented, []);
});

test("pulled header names are canonicalised as docs/api.md shows", async () => {
  await postWebhook(base.ingress, "/hooks/pull", "{}", { "content-type": "application/json", "X-GitHub-Event": "push" });
  const reply = await pullCall(base.pull, "jobs/dequeue", "pull-token", { batch: 1 });
  assert.is(reply.status, 200, reply.text);
  const names = Object.keys(reply.json.items[0].headers);
  assert.ok(names.includes("X-Github-Event"), `dequeued header names: ${names.join(", ")}`);
  const doc = readFileSync(repoPath("docs", "api.md"), "utf8");
  assert.ok(doc.includes("X-GitHub-Event") && doc.includes("X-Github-Event"), "docs/api.md shows the canonicalisation with this example");
});

test.run();
