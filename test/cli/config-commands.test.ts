import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath, spoolBin } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";

// The built `spool` binary, run as a subprocess, as an operator or CI would run it.
function spool(args: string[], cwd = repoPath(), env: Record<string, string> = {}): { code: number; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [spoolBin, ...args], { cwd, encoding: "utf8", env: { ...process.env, SPOOL_PULL_TOKEN: "", ...env } });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

const temp = makeTempDir("cli");
const dir = temp.path;
process.on("exit", () => temp.cleanup());
const messy = join(dir, "messy.spool");
const messyText = "# header\npull_api {   auth token raw:t   } # eol\n\n\n\n/a { pull { path /a } }\n";
const canonical = "# header\npull_api {\n  auth token raw:t\n} # eol\n\n/a {\n  pull {\n    path /a\n  }\n}\n";
const invalid = join(dir, "invalid.spool");
writeFileSync(invalid, "pull_api {\n  max_batch lots\n}\nbogus {}\n");
const broken = join(dir, "broken.spool");
writeFileSync(broken, "pull_api {\n  listen :9443\n");

const cli = suite("spool CLI");

cli("spool version prints the package version", () => {
  const { code, stdout } = spool(["version"]);
  assert.is(code, 0);
  const pkg = JSON.parse(readFileSync(repoPath("package.json"), "utf8")) as { version: string };
  assert.is(stdout, `${pkg.version}\n`);
  assert.match(stdout, /^\d+\.\d+\.\d+\n$/);
});

cli("option values are the text given: a file named 007 is read as such, and an empty --config is a usage error", () => {
  writeFileSync(join(dir, "007"), "ingress { }\n");
  const numeric = spool(["config", "validate", "--config", "007"], dir);
  assert.equal([numeric.code, numeric.stdout.trim()], [0, "007: valid"], numeric.stderr);
  for (const args of [["--config", ""], ["--config="]]) {
    const empty = spool(["config", "validate", ...args], dir);
    assert.equal([empty.code, empty.stderr.trim()], [2, "spool: --config needs a value"]);
  }
});

cli("config fmt prints the canonical form and leaves the file unchanged", () => {
  writeFileSync(messy, messyText);
  const { code, stdout } = spool(["config", "fmt", "--config", messy]);
  assert.is(code, 0);
  assert.is(stdout, canonical);
  assert.is(readFileSync(messy, "utf8"), messyText);
});

cli("config fmt --check exits 1 when unformatted, naming the file on stderr, 0 when formatted; stdout stays empty", () => {
  writeFileSync(messy, messyText);
  const unformatted = spool(["config", "fmt", "--check", "--config", messy]);
  assert.equal(unformatted, { code: 1, stdout: "", stderr: `${messy}: not formatted (run spool config fmt --write ${messy})\n` });
  writeFileSync(messy, canonical);
  const formatted = spool(["config", "fmt", "--check", "--config", messy]);
  assert.equal(formatted, { code: 0, stdout: "", stderr: "" });
});

cli("config fmt --check with no file checks ./Spoolfile and names it so", () => {
  const here = join(dir, "default-file");
  mkdirSync(here, { recursive: true });
  writeFileSync(join(here, "Spoolfile"), messyText);
  assert.equal(spool(["config", "fmt", "--check"], here), { code: 1, stdout: "", stderr: "./Spoolfile: not formatted (run spool config fmt --write ./Spoolfile)\n" });
});

cli("config fmt --check takes several files (--config and positional): each unformatted one is named, exit 1 if any", () => {
  const [a, b, c] = ["multi-a.spool", "multi-b.spool", "multi-c.spool"].map((name) => join(dir, name));
  writeFileSync(a, messyText);
  writeFileSync(b, canonical);
  writeFileSync(c, messyText);
  const some = spool(["config", "fmt", "--check", "--config", a, b, c]);
  assert.equal([some.code, some.stdout], [1, ""]);
  assert.is(some.stderr, `${a}: not formatted (run spool config fmt --write ${a})\n${c}: not formatted (run spool config fmt --write ${c})\n`);
  const none = spool(["config", "fmt", "--check", b, b]);
  assert.equal(none, { code: 0, stdout: "", stderr: "" });
  // A file that does not parse is named by its position; the others are still checked.
  const withBroken = spool(["config", "fmt", "--check", a, broken]);
  assert.is(withBroken.code, 2);
  assert.match(withBroken.stderr, `${a}: not formatted`);
  assert.match(withBroken.stderr, `${broken}:1:10: unclosed block`);
});

cli("config fmt --check counts a file given twice, spelt two ways, once", () => {
  const here = join(dir, "same-file");
  mkdirSync(here, { recursive: true });
  writeFileSync(join(here, "bad.spool"), messyText);
  assert.equal(spool(["config", "fmt", "--check", "bad.spool", "./bad.spool"], here), { code: 1, stdout: "", stderr: "bad.spool: not formatted (run spool config fmt --write bad.spool)\n" });
});

cli("config fmt --write rewrites each file given; one that does not parse is left alone and exits 1, the others are written", () => {
  const [a, b] = ["write-a.spool", "write-b.spool"].map((name) => join(dir, name));
  writeFileSync(a, messyText);
  writeFileSync(b, messyText);
  assert.equal(spool(["config", "fmt", "--write", a, b]), { code: 0, stdout: "", stderr: "" });
  assert.equal([readFileSync(a, "utf8"), readFileSync(b, "utf8")], [canonical, canonical]);
  writeFileSync(a, messyText);
  const withBroken = spool(["config", "fmt", "--write", broken, a]);
  assert.is(withBroken.code, 1);
  assert.match(withBroken.stderr, `${broken}:1:10: unclosed block`);
  assert.is(readFileSync(a, "utf8"), canonical);
  assert.is(readFileSync(broken, "utf8"), "pull_api {\n  listen :9443\n");
});

cli("config fmt prints one file only: several without --check or --write are a usage error (exit 2), nothing printed", () => {
  writeFileSync(messy, messyText);
  const several = spool(["config", "fmt", messy, "--config", invalid]);
  assert.equal([several.code, several.stdout], [2, ""]);
  assert.match(several.stderr, "use --check or --write");
  assert.equal(spool(["config", "fmt", messy]), { code: 0, stdout: canonical, stderr: "" });
});

cli("config fmt --write rewrites the file in place", () => {
  writeFileSync(messy, messyText);
  const { code, stdout } = spool(["config", "fmt", "--write", "--config", messy]);
  assert.equal([code, stdout], [0, ""]);
  assert.is(readFileSync(messy, "utf8"), canonical);
});

cli("config fmt --check --write together is a usage error: exit 2, the file untouched", () => {
  writeFileSync(messy, messyText);
  const { code, stdout, stderr } = spool(["config", "fmt", "--check", "--write", "--config", messy]);
  assert.is(code, 2);
  assert.is(stdout, "");
  assert.match(stderr, /--check and --write cannot be used together/);
  assert.is(readFileSync(messy, "utf8"), messyText);
});

cli("config fmt --check and --write agree on a byte-order mark: --check exits 1 where --write would drop it", () => {
  const withBom = join(dir, "bom.spool");
  writeFileSync(withBom, "\ufeff" + canonical);
  assert.is(spool(["config", "fmt", "--check", "--config", withBom]).code, 1);
  assert.is(spool(["config", "fmt", "--write", "--config", withBom]).code, 0);
  assert.is(readFileSync(withBom, "utf8"), canonical);
  assert.is(spool(["config", "fmt", "--check", "--config", withBom]).code, 0);
});

cli("an option given twice is a usage error (exit 2) naming it", () => {
  writeFileSync(messy, canonical);
  const twice = spool(["config", "validate", "--config", messy, "--config", messy]);
  assert.is(twice.code, 2);
  assert.match(twice.stderr, /--config was given more than once/);
});

cli("config fmt refuses a file that does not parse: exit 1, or 2 with --check, with positions", () => {
  const plain = spool(["config", "fmt", "--config", broken]);
  assert.is(plain.code, 1);
  assert.is(plain.stdout, "");
  assert.match(plain.stderr, `${broken}:1:10: unclosed block`);
  assert.is(spool(["config", "fmt", "--check", "--config", broken]).code, 2);
});

cli("config validate: exit 0 for the repository's example Spoolfile", () => {
  const { code, stdout } = spool(["config", "validate"]);
  assert.is(code, 0);
  assert.match(stdout, "valid");
});

cli("config validate: exit 1 with every error as file:line:col", () => {
  const { code, stderr } = spool(["config", "validate", "--config", invalid]);
  assert.is(code, 1);
  assert.match(stderr, `${invalid}:2:13: max_batch: expected a whole number, got "lots"`);
  assert.match(stderr, `${invalid}:4:1: unknown top-level block "bogus"`);
});

cli("config validate: one missing } in an indented file is one error, at the block that lost it, and no cascade", () => {
  const lostBrace = join(dir, "lost-brace.spool");
  const text = "pull_api {\n  auth token raw:t\n}\n\n/github {\n  deliver https://example.com/hook {\n    timeout 5s\n}\n\n/jobs {\n  pull {\n    path /jobs\n  }\n}\n";
  writeFileSync(lostBrace, text);
  const { code, stdout, stderr } = spool(["config", "validate", "--config", lostBrace]);
  assert.equal([code, stdout], [1, ""]);
  assert.is(
    stderr,
    `${lostBrace}:6:36: unclosed block: "deliver" opened here has no "}"; the next line at its indentation or less suggests it should have closed before line 8\n${lostBrace}: 1 error\n`,
  );
  const fmt = spool(["config", "fmt", "--write", "--config", lostBrace]);
  assert.is(fmt.code, 1);
  assert.is(readFileSync(lostBrace, "utf8"), text, "a file with a parse error is never rewritten");
});

cli("config validate --format json gives {ok, errors, warnings}", () => {
  const { code, stdout } = spool(["config", "validate", "--config", invalid, "--format", "json"]);
  assert.is(code, 1);
  const report = JSON.parse(stdout) as { ok: boolean; errors: { file: string; line: number; col: number; message: string }[]; warnings: unknown[] };
  assert.is(report.ok, false);
  assert.equal(report.errors.map((e) => [e.line, e.col]), [[2, 13], [4, 1]]);
  assert.equal(report.warnings, []);
});

cli("config validate: usage errors exit 2", () => {
  assert.is(spool(["config", "validate", "--format", "yaml"]).code, 2);
  const unknown = spool(["config", "validate", "--no-such-flag"]);
  assert.is(unknown.code, 2);
  assert.match(unknown.stderr, "Unknown option `--no-such-flag`", "named as typed, not camel-cased");
  for (const flag of ["--bogus-flag", "--bogus-flag=1"]) {
    const bogus = spool(["config", "validate", flag]);
    assert.equal([bogus.code, bogus.stderr.includes("Unknown option `--bogus-flag`")], [2, true], `${flag}: ${bogus.stderr}`);
  }
});

cli("config validate: a missing file is an error naming the file", () => {
  const { code, stderr } = spool(["config", "validate", "--config", join(dir, "nope.spool")]);
  assert.is(code, 1);
  assert.match(stderr, "nope.spool:1:1: cannot read config: file not found");
});

cli("config diff: layout-only differences vanish (exit 0); real ones print a unified diff (exit 1)", () => {
  const a = join(dir, "a.spool");
  const b = join(dir, "b.spool");
  writeFileSync(a, messyText);
  writeFileSync(b, canonical);
  assert.equal(spool(["config", "diff", a, b]), { code: 0, stdout: "", stderr: "" });
  writeFileSync(b, canonical.replace("path /a", "path /b"));
  const changed = spool(["config", "diff", a, b]);
  assert.is(changed.code, 1);
  assert.match(changed.stdout, "-    path /a\n+    path /b");
  assert.match(changed.stdout, `--- ${a}`);
});

cli("config diff --semantic lists IR changes; errors exit 2", () => {
  const a = join(dir, "a.spool");
  const b = join(dir, "b.spool");
  writeFileSync(a, canonical);
  writeFileSync(b, canonical + "\n/c {\n  pull {\n    path /c\n  }\n}\n");
  const changed = spool(["config", "diff", "--semantic", a, b]);
  assert.equal([changed.code, changed.stdout], [1, "+ route /c\n"]);
  assert.is(spool(["config", "diff", a, broken]).code, 2);
  assert.is(spool(["config", "diff", a]).code, 2);
});

cli("config diff --semantic shows placeholders, not the var or environment values they brought into URLs and arguments", () => {
  const a = join(dir, "leak-a.spool");
  const b = join(dir, "leak-b.spool");
  const text = (token: string, timeout: string) =>
    `vars { TOKEN ${token} }\n/c { deliver "https://hooks.example/in?token={vars.TOKEN}" { timeout 1s } }\n` +
    `/d { deliver "https://hooks.example/{env.SPOOL_TEST_PATH_SECRET}" { timeout ${timeout} } }\n/e { deliver exec "/bin/echo" "{vars.TOKEN}" }\n`;
  writeFileSync(a, text("hunter2-old", "1s"));
  writeFileSync(b, text("hunter2-new", "2s"));
  const changed = spool(["config", "diff", "--semantic", a, b], repoPath(), { SPOOL_TEST_PATH_SECRET: "abc123secret" });
  assert.is(changed.code, 1);
  assert.not.ok(/hunter2|abc123secret/.test(changed.stdout), changed.stdout);
  // The target is named by its URL, which changed behind the placeholder: one `~` line, not a `-`
  // and a `+` that read the same.
  assert.match(changed.stdout, "~ route /c › deliver https://hooks.example/in?token={vars.TOKEN} (changed where it is not shown)");
  assert.not.match(changed.stdout, "- route /c");
  assert.match(changed.stdout, "~ route /d › deliver https://hooks.example/{env.SPOOL_TEST_PATH_SECRET} › timeout: 1s -> 2s");
  // Exec arguments may carry credentials of their own: never printed (docs/cli.md).
  assert.match(changed.stdout, "~ route /e › deliver exec /bin/echo › arguments: (redacted) -> (redacted, changed)");
});

cli("config diff --semantic: errors give their positions, subjects and what was expected but no value of the files, since a misplaced credential is what they would quote", () => {
  const a = join(dir, "err-a.spool");
  const b = join(dir, "err-b.spool");
  writeFileSync(a, "/a { pull { path /a; auth token raw:t } }\n");
  writeFileSync(
    b,
    "/a { pull { path /a; auth token raw:t } }\n" +
      '/b { deliver "https://h.example/x?token=QS3CR3T"; deliver "https://h.example/x?token=QS3CR3T" }\n' +
      '/c { deliver "https://h.example/x" { header "Authorization" "Bearer HS3CR3T\\n"; sign raw:RS3CR3T } }\n' +
      '/d { auth basic "admin" "hunter" "extra" }\n',
  );
  const result = spool(["config", "diff", "--semantic", a, b]);
  assert.is(result.code, 2);
  assert.not.ok(/S3CR3T|hunter/.test(result.stderr), result.stderr);
  assert.match(result.stderr, `${b}:2:51: duplicate directive: route /b › deliver: expected each deliver target once per route`);
  assert.match(result.stderr, `${b}:3:61: invalid value: route /c › deliver › header: expected a header value without CR, LF or NUL`);
  assert.match(result.stderr, `${b}:3:86: invalid choice: route /c › deliver › sign: expected one of hmac, standard_webhooks,`);
  assert.match(result.stderr, `${b}:4:34: wrong number of arguments: route /d › auth › basic: expected 3 arguments (auth basic "user" "pass")`);
  assert.match(result.stderr, "values of the file are not shown here; `spool config validate` shows them");
  // config validate is where the details are.
  assert.match(spool(["config", "validate", "--config", b]).stderr, "RS3CR3T");
});

cli("an unknown command exits 2", () => {
  assert.is(spool(["frobnicate"]).code, 2);
});

cli.run();
