import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath, spoolBin } from "../helpers/repo.js";

// The CLI's own help against the pages that describe it: every command `spool --help` lists is in the
// README's "Command line" table and docs/cli.md's, and every flag a command's `--help` lists is written
// in its section of docs/cli.md (or the page that section hands the flags to).
function help(...args: string[]): string {
  const run = spawnSync(process.execPath, [spoolBin, ...args, "--help"], { encoding: "utf8" });
  assert.is(run.status, 0, run.stderr);
  return run.stdout;
}

/** The commands under "Commands:" in `spool --help`, e.g. `config fmt`, `mcp serve`. */
function commands(): string[] {
  const text = help();
  const block = text.slice(text.indexOf("Commands:"), text.indexOf("For more info"));
  return block
    .split("\n")
    .slice(1)
    .map((line) => /^\s{2}(\S+(?: [a-z][a-z-]*)?)/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
}

/** The long flags under "Options:" in `spool <command> --help`, without --help. */
function flags(command: string): string[] {
  const text = help(...command.split(" "));
  const options = text.slice(text.indexOf("Options:"));
  return [...options.matchAll(/^\s+(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1]).filter((f) => f !== "--help");
}

/** Markdown from the heading `## \`spool <command>\`` to the next `## `. */
function section(markdown: string, command: string): string {
  const start = markdown.indexOf(`\n## \`spool ${command}\`\n`);
  assert.ok(start >= 0, `docs/cli.md has a "## \`spool ${command}\`" section`);
  const end = markdown.indexOf("\n## ", start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

const readme = readFileSync(repoPath("README.md"), "utf8");
const cli = readFileSync(repoPath("docs", "cli.md"), "utf8");
// Sections of docs/cli.md that hand their flags to another page, which must then list them.
const flagPages: Record<string, string> = { "verify-release": readFileSync(repoPath("docs", "releases.md"), "utf8") };

const test = suite("the CLI's help against README.md and docs/cli.md");

test("spool --help lists the commands this test expects (the parser still works)", () => {
  const names = commands();
  for (const name of ["run", "config fmt", "config validate", "config diff", "lsp", "mcp serve", "verify-release", "version"]) {
    assert.ok(names.includes(name), `${name} in ${JSON.stringify(names)}`);
  }
});

test("every command is in the README's command table and docs/cli.md's", () => {
  const readmeTable = readme.slice(readme.indexOf("## Command line"), readme.indexOf("\n## ", readme.indexOf("## Command line") + 1));
  const cliTable = cli.slice(0, cli.indexOf("\n## "));
  for (const name of commands()) {
    assert.match(readmeTable, new RegExp(`^\\| \`spool ${name}[\` ]`, "m"), `the Command line table of README.md lists spool ${name}`);
    assert.match(cliTable, new RegExp(`^\\| \`spool ${name}[\` ]`, "m"), `docs/cli.md's table lists spool ${name}`);
  }
});

test("every flag of every command is documented in its docs/cli.md section", () => {
  const missing: string[] = [];
  for (const name of commands()) {
    const text = flagPages[name] ?? section(cli, name);
    for (const flag of flags(name)) if (!new RegExp(`${flag}(?![a-z-])`).test(text)) missing.push(`spool ${name} ${flag}`);
  }
  assert.equal(missing, []);
});

test("a command group given alone names its subcommands; an unknown command says so (exit 2 for both)", () => {
  const run = (...args: string[]) => spawnSync(process.execPath, [spoolBin, ...args], { encoding: "utf8" });
  const mcp = run("mcp");
  assert.equal([mcp.status, mcp.stdout, mcp.stderr], [2, "", 'spool: "mcp" needs a subcommand: spool mcp serve; run spool --help\n']);
  const config = run("config");
  assert.is(config.status, 2);
  assert.is(config.stderr, 'spool: "config" needs a subcommand: spool config fmt, spool config validate, spool config diff; run spool --help\n');
  const bogus = run("mcp", "bogus");
  assert.equal([bogus.status, bogus.stderr], [2, 'spool: unknown command "mcp bogus"; run spool --help\n']);
});

test.run();
