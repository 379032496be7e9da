// Entry point of Keep's single executable (keep/README.md, "Release assets"): only `fetch`,
// `exec` and `version`, with no SQLite and no server code. The full CLI (main.ts) dispatches the
// same consumer commands.
import { keepVersion } from "../common/version.js";
import { CONSUMER_COMMANDS, runConsumer } from "./consumer-commands.js";

async function main(): Promise<void> {
  const [command, ...args] = process.argv.slice(2);
  if (command === "version" && args.length === 0) {
    process.stdout.write(`${keepVersion}\n`);
    return;
  }
  if (command !== undefined && CONSUMER_COMMANDS.has(command)) await runConsumer(command, args);
  process.stderr.write("usage: keep fetch … | keep exec … -- CMD [ARG …] | keep version (this build holds only these)\n");
  process.exitCode = 2;
}

void main();
