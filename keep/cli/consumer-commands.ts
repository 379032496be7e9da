// Dispatch for the consumer commands, shared by the full `keep` CLI and the single executable
// (keep/README.md, "Release assets"), which holds only `fetch`, `exec` and `version`.
import { runExec } from "./exec-command.js";
import { runFetch } from "./fetch-command.js";

export const CONSUMER_COMMANDS = new Set(["fetch", "exec"]);

const USAGE: Record<string, string> = {
  fetch: "usage: keep fetch --url https://HOST:PORT --ca CA.pem --token-file T --path P … --format actions-env --github-env FILE\n       (or --format dotenv | json, printed on stdout); see keep/README.md\n",
  exec: "usage: keep exec --url https://HOST:PORT --ca CA.pem --token-file T --path P … [--report] -- CMD [ARG …]\n       exits 125 (keep failed), 126, 127, 128+N or the child's status; see keep/README.md\n",
};

/** Runs `keep fetch` or `keep exec` and exits with its status. */
export async function runConsumer(command: string, args: readonly string[]): Promise<never> {
  const dash = args.indexOf("--");
  const own = dash < 0 ? args : args.slice(0, dash);
  if (own.includes("--help") || own.includes("-h")) {
    process.stdout.write(USAGE[command]);
    process.exit(0);
  }
  const status = command === "fetch" ? await runFetch(args) : await runExec(args);
  process.exit(status);
}
