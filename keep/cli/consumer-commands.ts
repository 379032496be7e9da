// Dispatch for the consumer commands, shared by the full `keep` CLI and the single executable
// (keep/README.md, "Release assets"), which holds only `fetch`, `exec` and `version`.
import { runExec } from "./exec-command.js";
import { runFetch } from "./fetch-command.js";

export const CONSUMER_COMMANDS = new Set(["fetch", "exec"]);

/** Runs `keep fetch` or `keep exec` and exits with its status. */
export async function runConsumer(command: string, args: readonly string[]): Promise<never> {
  const status = command === "fetch" ? await runFetch(args) : await runExec(args);
  process.exit(status);
}
