#!/usr/bin/env node
// The `keep` command (keep/README.md): serve, the admin commands on a data directory, audit verify,
// version, and the consumer commands fetch and exec. Admin failures exit 1 with a message on stderr; usage errors exit 2.
import { cac } from "cac";
import { keepVersion } from "../common/version.js";
import { verifyAuditFile } from "../server/audit-verify.js";
import { CONSUMER_COMMANDS, runConsumer } from "./consumer-commands.js";
import { PolicyError } from "../server/policy.js";
import { AdminError, ls, put, rm, rotateKey, tokenIssue, tokenRevoke } from "./admin.js";
import { givenValue, required, UsageError } from "./args.js";
import { runServe } from "./serve-command.js";

// The consumer commands parse their own flags (keep/consumer/inputs.ts): no flag takes a token.
if (CONSUMER_COMMANDS.has(process.argv[2])) await runConsumer(process.argv[2], process.argv.slice(3));

// cac matches one word per command; `keep token issue` is registered as "token issue".
const argv = [...process.argv];
const joined = new Set(["token", "audit"]);
if (joined.has(argv[2]) && argv[3] !== undefined && !argv[3].startsWith("-")) argv.splice(2, 2, `${argv[2]} ${argv[3]}`);
const raw = argv.slice(3);
const cli = cac("keep");
let pending: Promise<number> | undefined;

function admin(work: () => void | string | Promise<void | string>): void {
  pending = (async () => {
    const out = await work();
    if (out) process.stdout.write(out);
    return 0;
  })();
}

cli.command("fetch", "Fetch a set for CI: --format actions-env --github-env FILE (also dotenv, json)");
cli.command("exec", "Run a program with the set in its environment: … [--report] -- CMD [ARG …]");
cli.command("version", "Print the Keep version").action(() => process.stdout.write(`${keepVersion}\n`));
cli
  .command("serve", "Serve secrets over HTTPS")
  .option("--listen <addr>", "HOST:PORT")
  .option("--tls-cert <file>", "Server certificate (PEM)")
  .option("--tls-key <file>", "Server private key (PEM)")
  .option("--policy <file>", "Policy file (TOML)")
  .option("--data <dir>", "Data directory")
  .option("--audit-log <file>", "Audit log (default DIR/audit.log)")
  .option("--enable-export", "Serve POST /v1/export")
  .option("--dev", "Try Keep: throwaway CA, demo policy, token and secrets in ./.data/keep/")
  .action((opts: { dev?: boolean; enableExport?: boolean }) => {
    pending = runServe(raw, opts.dev === true, opts.enableExport === true);
  });
cli
  .command("put <path>", "Store a value read from stdin (byte-exact) or --value-file")
  .option("--data <dir>", "Data directory")
  .option("--value-file <file>", "Read the value from this file")
  .action((path: string) => admin(() => put(String(path), required(raw, "data"), givenValue(raw, "value-file"))));
cli
  .command("rm <path>", "Delete a path")
  .option("--data <dir>", "Data directory")
  .action((path: string) => admin(() => rm(String(path), required(raw, "data"))));
cli
  .command("ls [prefix]", "List stored paths (never values)")
  .option("--data <dir>", "Data directory")
  .action((prefix?: string) => admin(() => ls(prefix === undefined ? undefined : String(prefix), required(raw, "data"))));
cli
  .command("token issue <identity>", "Write a fresh token to a new 0600 file (never printed)")
  .option("--policy <file>", "Policy file (TOML)")
  .option("--data <dir>", "Data directory")
  .option("--out <file>", "Token file to create")
  .action((identity: string) => admin(() => tokenIssue(String(identity), required(raw, "policy"), required(raw, "data"), required(raw, "out"))));
cli
  .command("token revoke <identity>", "Revoke an identity's token")
  .option("--data <dir>", "Data directory")
  .action((identity: string) => admin(() => tokenRevoke(String(identity), required(raw, "data"))));
cli
  .command("rotate-key", "Re-seal every value under a new master key (one transaction)")
  .option("--data <dir>", "Data directory")
  .action(() => admin(() => rotateKey(required(raw, "data"))));
cli.command("audit verify <file>", "Check the audit log's hash chain").action((file: string) => {
  pending = (async () => {
    const result = verifyAuditFile(String(file));
    if (result.ok) {
      process.stdout.write(`keep: audit chain intact (${result.lines} lines)\n`);
      return 0;
    }
    process.stderr.write(`keep: audit chain broken at line ${result.line}: ${result.reason}\n`);
    return 1;
  })();
});
cli.help();

try {
  cli.parse(argv, { run: false });
  if (!cli.matchedCommand && !cli.options.help) {
    if (cli.args[0] !== undefined) throw new UsageError(`unknown command ${JSON.stringify(cli.args[0])}; run keep --help`);
    cli.outputHelp();
  } else if (cli.matchedCommand) {
    await cli.runMatchedCommand();
    if (pending) process.exitCode = await pending;
  }
} catch (error) {
  const usage = error instanceof UsageError || (error as Error).name === "CACError";
  const known = usage || error instanceof AdminError || error instanceof PolicyError || (error as NodeJS.ErrnoException).code !== undefined;
  process.stderr.write(`keep: ${known ? (error as Error).message : `unexpected error (${(error as Error).name})`}\n`);
  process.exitCode = usage ? 2 : 1;
}
