#!/usr/bin/env node
import { cac } from "cac";
import type { VerifyReleaseFlags } from "./commands/verify-release.js";
import { spoolVersion } from "./version.js";

const DEFAULT_CONFIG = "./Spoolfile";

/** The text given for `--flag value` or `--flag=value` (the last one), before any parsing. */
function givenValue(args: readonly string[], flag: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--") break;
    if (args[i] === `--${flag}` && i + 1 < args.length) value = args[++i];
    else if (args[i].startsWith(`--${flag}=`)) value = args[i].slice(flag.length + 3);
  }
  return value;
}

// cac matches one word per command; `spool config fmt` is registered as the command "config fmt"
// and the two words are joined before parsing.
const argv = [...process.argv];
if ((argv[2] === "config" || argv[2] === "mcp") && argv[3] !== undefined && !argv[3].startsWith("-")) argv.splice(2, 2, `${argv[2]} ${argv[3]}`);

// Start fast (docs/decisions.md D140): a command's modules load only when that command runs, so
// `spool version` and `spool config fmt` never load the runtime (prom-client, undici, the stores,
// OpenTelemetry). Each action imports its command file with `import()`; keep new commands so.
const output = async () => (await import("./io.js")).processOutput;

const cli = cac("spool");
let pending: Promise<number> | undefined;
// `run` exits as soon as it has stopped: an idle pool or timer must not keep a stopped server
// alive past its shutdown budget (10 s for work in flight, exit within 15 s) (docs/decisions.md D54).
let exitWhenDone = false;

cli.command("version", "Print the Spool version").action(() => {
  process.stdout.write(`${spoolVersion}\n`);
});

cli
  .command("config fmt [...files]", "Format Spoolfiles losslessly: print one (the default), or --write or --check each of the files given (--config F and FILE…; none: ./Spoolfile)")
  .option("--config <file>", "Config file (default: ./Spoolfile when no file is given)")
  .option("--write", "Rewrite each file atomically; exit 1 if any does not parse (the others are still written)")
  .option("--check", "Print nothing on stdout; name each file not formatted on stderr; exit 1 if any is not formatted, 2 if any does not parse")
  .example("spool config fmt --config Spoolfile --check")
  .example("spool config fmt --check a.spool b.spool")
  .action((files: string[], flags: { config?: string; write?: boolean; check?: boolean }) => {
    pending = import("./commands/config-fmt.js").then(async (m) => m.runConfigFmt(files, flags, await output()));
  });

cli
  .command("config validate [...files]", "Validate the Spoolfile (or each FILE given, as pre-commit passes them): exit 0 valid, 1 invalid, 2 usage error")
  .option("--config <file>", "Config file", { default: DEFAULT_CONFIG })
  .option("--format <format>", "text or json", { default: "text" })
  .option("--strict-secrets", "Treat unreadable secrets (unset env, missing file) as errors")
  .example("spool config validate --config Spoolfile --format json")
  .action((files: string[], flags: { config: string; format: string; strictSecrets?: boolean }) => {
    pending = import("./commands/config-validate.js").then(async (m) => m.runConfigValidateFiles(files, flags, await output()));
  });

cli
  .command("config diff [old] [new]", "Unified diff of two Spoolfiles after formatting: exit 0 same, 1 different, 2 error")
  .option("--semantic", "List the changes by Spoolfile directive instead of a text diff (~ route /x › deliver https://… › timeout: 5s -> 10s); credentials are never printed")
  .example("spool config diff Spoolfile.old Spoolfile --semantic")
  .action((oldPath: string | undefined, newPath: string | undefined, flags: { semantic?: boolean }) => {
    pending = import("./commands/config-diff.js").then(async (m) => m.runConfigDiff(oldPath, newPath, flags, await output()));
  });

cli
  .command("lsp", "The Spoolfile language server, on stdin/stdout (docs/editors.md)")
  .option("--stdio", "Talk over stdin/stdout (the default and only transport; editors pass it)")
  .action(() => {
    exitWhenDone = true;
    pending = import("./commands/lsp.js").then((m) => m.runLsp());
  });

cli
  .command("run", "Start the server")
  .option("--config <path>", "Config file path", { default: DEFAULT_CONFIG })
  .option("--db <path>", "SQLite database path", { default: "./.data/spool.db" })
  .option("--postgres-dsn <dsn>", "PostgreSQL DSN, used when queue.backend is postgres (default: $SPOOL_POSTGRES_DSN; tables in the schema $SPOOL_POSTGRES_SCHEMA, default spool)")
  .option("--pid-file <path>", "Write the pid once healthy; enables reload on SIGHUP")
  .option("--watch", "Hot-reload on config file change")
  .option("--log-level <level>", "Runtime log level (debug, info, warn, error, off); overrides the config")
  .option("--dotenv <path>", "Load KEY=value environment variables from a file")
  .example("spool run --config Spoolfile --db ./.data/spool.db --watch")
  .action((flags: { config: string; db: string; postgresDsn?: string; pidFile?: string; watch?: boolean; logLevel?: string; dotenv?: string }) => {
    exitWhenDone = true;
    pending = import("./commands/run.js").then((m) => m.runCommand({ ...flags, config: String(flags.config), db: String(flags.db) }));
  });

cli
  .command("verify-release [...args]", "Verify a downloaded release: checksums, Ed25519 signature, SBOM, provenance; exit 0 verified, 1 a check failed, 2 usage error")
  .option("--checksums <file>", "The release's spool_<version>_checksums.txt (required)")
  .option("--base-dir <dir>", "Where the listed files are (default: the checksums file's directory)")
  .option("--signature <file>", "Base64 Ed25519 signature over the checksums file (default: <checksums>.sig when it and the key exist)")
  .option("--public-key <file>", "PEM Ed25519 public key (default: <checksums>.pub.pem)")
  .option("--require-signature", "Fail when there is no signature")
  .option("--sbom <file>", "SPDX 2.3 JSON SBOM (default: the checksums entry ending _sbom.spdx.json)")
  .option("--require-sbom", "Fail when there is no SBOM")
  .option("--provenance <file>", "SLSA v1 provenance, DSSE envelopes (default: the *_provenance.intoto.jsonl found)")
  .option("--require-provenance", "Fail when there is no provenance")
  .option("--sbom-attestation <file>", "SBOM attestation, DSSE envelopes (default: the *_sbom.intoto.jsonl found)")
  .option("--json", "One line of JSON instead of text")
  .example("spool verify-release --checksums spool_1.2.3_checksums.txt --public-key spool-release.pub.pem --signature spool_1.2.3_checksums.txt.sig --require-signature")
  .action((args: string[], flags: VerifyReleaseFlags) => {
    // Loaded only when it runs: node:crypto and node:fs, nothing of the runtime (docs/releases.md).
    pending = import("./commands/verify-release.js").then((m) => m.runVerifyRelease(args, flags));
  });

cli
  .command("mcp serve", "MCP server for AI tooling on stdin/stdout (docs/mcp.md); read tools only unless enabled")
  .option("--config <file>", "The only Spoolfile the tools read or write", { default: DEFAULT_CONFIG })
  .option("--db <path>", "SQLite database (sqlite backend; never created)", { default: "./.data/spool.db" })
  .option("--role <role>", "read, operate or admin", { default: "read" })
  .option("--enable-mutations", "Allow the tools that change the queue or the config")
  .option("--enable-runtime-control", "Allow the instance_* tools")
  .option("--principal <name>", "Who is acting: bound to every mutation and audit line")
  .option("--pid-file <path>", "The pid file the instance_* tools use", { default: "./spool.pid" })
  .option("--admin-endpoint-allowlist <list>", "Comma-separated host:port or http(s)://host[:port][/path] the tools may call")
  .action((flags: { config: string; db: string; role: string; enableMutations?: boolean; enableRuntimeControl?: boolean; principal?: string; pidFile: string; adminEndpointAllowlist?: string }) => {
    exitWhenDone = true;
    pending = import("./commands/mcp-serve.js").then((m) => m.runMcpServe({ ...flags, config: String(flags.config), db: String(flags.db), pidFile: String(flags.pidFile), role: String(flags.role) }));
  });

cli.help();
cli.version(spoolVersion);

try {
  cli.parse(argv, { run: false });
  // cac collects a repeated option into an array; no option of spool's is repeatable.
  for (const [name, value] of Object.entries(cli.options)) {
    if (name !== "--" && Array.isArray(value)) throw new Error(`--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} was given more than once`);
  }
  // Option values are text as given. cac's parser (mri) turns numeric-looking values into numbers
  // ("" → 0, "007" → 7), and a number where a path belongs is a file descriptor to node:fs
  // (`--config 0` read standard input).
  // The options that take a value are the matched command's non-boolean ones (all text).
  for (const option of cli.matchedCommand?.options ?? []) {
    const flag = option.isBoolean ? undefined : /--([\w-]+)/.exec(option.rawName)?.[1];
    const given = flag === undefined ? undefined : givenValue(argv, flag);
    if (given === undefined) continue;
    if (given === "") throw new Error(`--${flag} needs a value`);
    cli.options[option.name] = given;
  }
  if (!cli.matchedCommand && !cli.options.help && !cli.options.version) {
    const given = cli.args[0];
    if (given !== undefined) {
      // `spool mcp` or `spool config` alone: name the commands of the group rather than calling it unknown.
      const group = cli.commands.map((c) => c.name).filter((name) => name.startsWith(`${given} `));
      const message = group.length > 0 ? `${JSON.stringify(given)} needs a subcommand: ${group.map((name) => `spool ${name}`).join(", ")}` : `unknown command ${JSON.stringify(given)}`;
      process.stderr.write(`spool: ${message}; run spool --help\n`);
      process.exitCode = 2;
    } else cli.outputHelp();
  } else {
    await cli.runMatchedCommand();
    if (pending) process.exitCode = await pending;
    if (exitWhenDone) process.exit();
  }
} catch (error) {
  // Usage errors (unknown or malformed options) exit 2, like the config commands' usage errors.
  process.stderr.write(`spool: ${asGiven((error as Error).message)}\n`);
  process.exitCode = 2;
}

/**
 * cac names an unknown option camel-cased, and a `--no-` one without its prefix (`--no-such-flag`
 * is reported as `--suchFlag`); the message names it as the operator typed it.
 */
function asGiven(message: string): string {
  const camel = (name: string) => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  return message.replace(/`--([A-Za-z0-9]+)`/g, (whole, name: string) => {
    const typed = argv
      .filter((arg) => arg.startsWith("--"))
      .map((arg) => arg.split("=")[0])
      .find((flag) => camel(flag.slice(2)) === name || (flag.startsWith("--no-") && camel(flag.slice(5)) === name));
    return typed === undefined ? whole : `\`${typed}\``;
  });
}
