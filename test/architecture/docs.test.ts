// The repository stands alone and its front door stays a front door: README.md is short, its
// links resolve, the details live in docs/, nothing cites a document outside the repository, and
// the licence package.json names is there.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { DIAGNOSTIC_SENTENCES } from "../../grammar/diagnostic.js";
import { repoPath } from "../helpers/repo.js";

const test = suite("documentation");

const readme = readFileSync(repoPath("README.md"), "utf8");

/** Source and documentation files of the repository (not dependencies, not build output). */
function repositoryFiles(dir = repoPath()): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name.startsWith(".") || name === "node_modules" || name === "dist") return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return repositoryFiles(path);
    return /\.(ts|md|mjs|js|json)$/.test(name) && name !== "package-lock.json" ? [path] : [];
  });
}

test("README.md is under 250 lines and no prose line is over 200 characters", () => {
  const lines = readme.split("\n");
  assert.ok(lines.length <= 250, `README.md has ${lines.length} lines`);
  let inCode = false;
  const long: string[] = [];
  lines.forEach((line, i) => {
    if (line.startsWith("```")) inCode = !inCode;
    else if (!inCode && line.length > 200) long.push(`README.md:${i + 1} (${line.length} characters)`);
  });
  assert.equal(long, []);
});

test("every relative link in README.md and docs/ resolves to a file of the repository", () => {
  const broken: string[] = [];
  const files = [repoPath("README.md"), ...readdirSync(repoPath("docs")).filter((n) => n.endsWith(".md")).map((n) => repoPath("docs", n))];
  for (const file of files) {
    for (const m of readFileSync(file, "utf8").matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      const target = m[1];
      if (/^[a-z]+:/.test(target)) continue;
      if (!existsSync(join(dirname(file), target))) broken.push(`${relative(repoPath(), file)} → ${target}`);
    }
  }
  assert.equal(broken, []);
});

test("the README links the docs a new user needs", () => {
  for (const doc of ["spoolfile.md", "cli.md", "api.md", "delivery.md", "operations.md", "decisions.md", "benchmarks.md"]) {
    assert.ok(existsSync(repoPath("docs", doc)), `docs/${doc} exists`);
    assert.ok(readme.includes(`docs/${doc}`), `README.md links docs/${doc}`);
  }
});

test("the README's Documentation table has a row for every page in docs/", () => {
  const start = readme.indexOf("## Documentation");
  const table = readme.slice(start, readme.indexOf("\n## ", start + 1));
  const missing = readdirSync(repoPath("docs"))
    .filter((n) => n.endsWith(".md") && !table.includes(`| [docs/${n}](docs/${n}) |`))
    .map((n) => `docs/${n}`);
  assert.equal(missing, []);
});

test("no file cites a specification document outside the repository", () => {
  // The file names, and the looser forms of the same citations (DECISIONS "…", reference §2 row N,
  // clarification N), so none can come back.
  // Also README "Section": the README is a front door whose sections move; details live in docs/.
  const outside =
    /\b(?:DECISIONS|webhook-queue\.md|reference-behaviour(?:\.md)?|clarifications\.md|extensions\.md|keep\.md)\b|reference §|\bclarifications? \d|shared\/spec|(?<!keep\/)\bREADME(?:\.md)? "/;
  const citing: string[] = [];
  for (const file of repositoryFiles()) {
    // This file names them to forbid them.
    if (file.endsWith(join("architecture", "docs.test.ts"))) continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (outside.test(line)) citing.push(`${relative(repoPath(), file)}:${i + 1}`);
      });
  }
  assert.equal(citing, []);
});

test("LICENSE holds the Apache License 2.0 that package.json names", () => {
  const pkg = JSON.parse(readFileSync(repoPath("package.json"), "utf8")) as { license: string };
  assert.is(pkg.license, "Apache-2.0");
  const license = readFileSync(repoPath("LICENSE"), "utf8");
  assert.match(license, /Apache License\s+Version 2\.0, January 2004/);
  assert.match(license, /END OF TERMS AND CONDITIONS/);
});

test("docs/cli.md lists every diagnostic code with its sentence", () => {
  const cli = readFileSync(repoPath("docs", "cli.md"), "utf8");
  const missing = Object.entries(DIAGNOSTIC_SENTENCES).filter(([code, sentence]) => !cli.includes(`| \`${code}\` | ${sentence} |`));
  assert.equal(missing, []);
});

test.run();
