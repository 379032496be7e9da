import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath, spoolBin } from "../helpers/repo.js";
import { reportSkipped } from "../helpers/skip.js";
import { makeTempDir } from "../helpers/temp-dir.js";

// The pre-commit hooks (.pre-commit-hooks.yaml, docs/editors.md#pre-commit): the manifest has the
// shape pre-commit reads, each hook's entry does its job when run as pre-commit runs it (the entry,
// then the staged file names), and, where pre-commit is installed, `pre-commit try-repo` runs them.
const temp = makeTempDir("pre-commit");
process.on("exit", () => temp.cleanup());

interface Hook {
  id: string;
  name: string;
  entry: string;
  language: string;
  files?: string;
  [key: string]: unknown;
}

// The keys and languages pre-commit's manifest schema knows (pre_commit/clientlib.py, 3.x and 4.x).
const HOOK_KEYS = ["id", "name", "entry", "language", "alias", "files", "exclude", "types", "types_or", "exclude_types", "additional_dependencies", "args", "always_run", "fail_fast", "pass_filenames", "description", "language_version", "log_file", "minimum_pre_commit_version", "require_serial", "stages", "verbose"];
const LANGUAGES = ["conda", "coursier", "dart", "docker", "docker_image", "dotnet", "fail", "golang", "haskell", "julia", "lua", "node", "perl", "pygrep", "python", "r", "ruby", "rust", "script", "swift", "system", "unsupported", "unsupported_script"];

const python = spawnSync("python3", ["-c", "import sys, json, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)"], { input: readFileSync(repoPath(".pre-commit-hooks.yaml"), "utf8"), encoding: "utf8" });
const hooks = python.status === 0 ? (JSON.parse(python.stdout) as Hook[]) : undefined;

/** Does Python's re.search (pre-commit's) find `pattern` in each path? */
function pythonSearch(pattern: string, paths: readonly string[]): boolean[] {
  const run = spawnSync("python3", ["-c", "import sys, re, json; p = re.compile(sys.argv[1]); print(json.dumps([bool(p.search(x)) for x in sys.argv[2:]]))", pattern, ...paths], { encoding: "utf8" });
  assert.is(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as boolean[];
}

/** A directory with a `spool` program that runs the built CLI, as an installed spool would. */
function spoolOnPath(): string {
  const bin = join(temp.path, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "spool"), `#!/bin/sh\nexec "${process.execPath}" "${spoolBin}" "$@"\n`);
  chmodSync(join(bin, "spool"), 0o755);
  return bin;
}

const MESSY = "ingress {   listen :8080 }\n\n\n/a { pull { path /a; auth token raw:t } }\n";
const CANONICAL = "ingress {\n  listen :8080\n}\n\n/a {\n  pull {\n    path /a\n    auth token raw:t\n  }\n}\n";

const preCommit = suite("pre-commit hooks");

if (!hooks) {
  reportSkipped("pre-commit manifest", 4, `python3 with PyYAML is needed to read the manifest (${python.stderr.trim().split("\n").pop()})`);
} else {
  preCommit("the manifest has pre-commit's shape: each hook's keys, language and files pattern", () => {
    assert.equal(hooks.map((h) => h.id), ["spool-fmt", "spool-validate", "spool-fmt-system", "spool-validate-system"]);
    for (const hook of hooks) {
      for (const key of ["id", "name", "entry", "language"]) assert.type(hook[key], "string", `${hook.id}.${key}`);
      assert.equal(Object.keys(hook).filter((k) => !HOOK_KEYS.includes(k)), [], hook.id);
      assert.ok(LANGUAGES.includes(hook.language), hook.language);
      assert.is(hook.files, "(^|/)Spoolfile$");
    }
    assert.equal(pythonSearch("(^|/)Spoolfile$", ["Spoolfile", "deploy/prod/Spoolfile", "Spoolfile.bak", "MySpoolfile", "deploy/a.spool"]), [true, true, false, false, false]);
  });

  preCommit("docs/editors.md names every hook of the manifest, and its snippets only those", () => {
    const docs = readFileSync(repoPath("docs", "editors.md"), "utf8");
    const ids = hooks.map((h) => h.id);
    for (const id of ids) assert.ok(docs.includes(`| \`${id}\` |`), `${id} is not in the hooks table`);
    const used = [...docs.matchAll(/- id: (\S+)/g)].map((m) => m[1]);
    assert.ok(used.length >= 4);
    assert.equal(used.filter((id) => !ids.includes(id)), []);
  });

  preCommit("each entry, run as pre-commit runs it (entry then file names), formats or validates those files", () => {
    const path = spoolOnPath();
    const dir = join(temp.path, "entries");
    mkdirSync(join(dir, "deploy"), { recursive: true });
    const files = [join(dir, "Spoolfile"), join(dir, "deploy", "Spoolfile")];
    for (const file of files) writeFileSync(file, MESSY);
    const run = (hook: Hook, names: readonly string[]) => spawnSync("sh", ["-c", `${hook.entry} "$@"`, "hook", ...names], { encoding: "utf8", env: { ...process.env, PATH: `${path}:${process.env.PATH}` } });
    for (const id of ["spool-fmt", "spool-fmt-system"]) {
      for (const file of files) writeFileSync(file, MESSY);
      const fmt = run(hooks.find((h) => h.id === id)!, files);
      assert.is(fmt.status, 0, fmt.stderr);
      for (const file of files) assert.is(readFileSync(file, "utf8"), CANONICAL, `${id} ${file}`);
    }
    writeFileSync(files[1], "ingress {\n  lisen :8080\n}\n");
    for (const id of ["spool-validate", "spool-validate-system"]) {
      const validate = run(hooks.find((h) => h.id === id)!, files);
      assert.is(validate.status, 1, id);
      assert.match(validate.stderr, `${files[1]}:2:3: unknown directive "lisen"`);
      assert.match(validate.stdout, `${files[0]}: valid`);
    }
  });

  const hasPreCommit = spawnSync("pre-commit", ["--version"], { encoding: "utf8" }).status === 0;
  if (!hasPreCommit) {
    reportSkipped("pre-commit try-repo", 1, "pre-commit is not installed here (pip install pre-commit)");
  } else {
    preCommit("pre-commit try-repo formats a messy Spoolfile with spool-fmt-system", () => {
      const path = spoolOnPath();
      const project = join(temp.path, "project");
      mkdirSync(project, { recursive: true });
      const git = (...args: string[]) => spawnSync("git", args, { cwd: project, encoding: "utf8" });
      git("init", "-q");
      writeFileSync(join(project, "Spoolfile"), MESSY);
      git("add", "Spoolfile");
      const tried = spawnSync("pre-commit", ["try-repo", repoPath(), "spool-fmt-system", "--files", "Spoolfile"], { cwd: project, encoding: "utf8", env: { ...process.env, PATH: `${path}:${process.env.PATH}` } });
      assert.is(tried.status, 1, "pre-commit fails a hook that changed files");
      assert.match(tried.stdout, "files were modified by this hook");
      assert.is(readFileSync(join(project, "Spoolfile"), "utf8"), CANONICAL);
    });
  }
}

preCommit.run();
