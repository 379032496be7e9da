import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath } from "../helpers/repo.js";

// The VS Code extension's manifest (editors/vscode/): the language, its files, the grammar and the
// client, declared where VS Code and vsce look for them. Packaging (vsce) is not run here.
const dir = repoPath("editors", "vscode");
const json = (path: string) => JSON.parse(readFileSync(join(dir, path), "utf8")) as Record<string, any>;
const manifest = json("package.json");

const extension = suite("VS Code extension");

extension("declares the spoolfile language for Spoolfile, *.Spoolfile and *.spool, with its configuration", () => {
  const [language] = manifest.contributes.languages;
  assert.is(language.id, "spoolfile");
  assert.ok(language.filenames.includes("Spoolfile"));
  assert.ok(language.filenamePatterns.includes("*.Spoolfile"));
  assert.ok(language.extensions.includes(".spool"));
  const configuration = json(language.configuration);
  assert.equal(configuration.comments, { lineComment: "#" });
  assert.equal(configuration.brackets, [["{", "}"]]);
  assert.ok(new RegExp(configuration.indentationRules.increaseIndentPattern).test("ingress {"));
  assert.ok(new RegExp(configuration.indentationRules.decreaseIndentPattern).test("  }"));
  assert.not.ok(new RegExp(configuration.indentationRules.increaseIndentPattern).test('  header "{" "x"'));
});

extension("the grammar it names exists and has the scope it declares", () => {
  const [grammar] = manifest.contributes.grammars;
  assert.is(grammar.language, "spoolfile");
  assert.is(json(grammar.path).scopeName, grammar.scopeName);
});

extension("the client is valid JavaScript that starts `<server.path> [server.args…] lsp` over stdio", () => {
  assert.ok(existsSync(join(dir, manifest.main)));
  const check = spawnSync(process.execPath, ["--check", join(dir, manifest.main)], { encoding: "utf8" });
  assert.is(check.status, 0, check.stderr);
  const source = readFileSync(join(dir, manifest.main), "utf8");
  assert.match(source, 'require("vscode-languageclient/node")');
  assert.match(source, '[...config.get("server.args", []), "lsp"]');
  assert.match(source, "TransportKind.stdio");
  assert.is(manifest.contributes.configuration.properties["spoolfile.server.path"].default, "spool");
  assert.is(manifest.contributes.configurationDefaults["[spoolfile]"]["editor.formatOnSave"], true);
});

extension("vscode-languageclient and @vscode/vsce 3.x are the extension's own dependencies, not the repository's", () => {
  assert.match(manifest.dependencies["vscode-languageclient"], /^\^9\./);
  assert.match(manifest.devDependencies["@vscode/vsce"], /^\^3\./);
  assert.match(manifest.scripts.package, /vsce package/);
  const root = JSON.parse(readFileSync(repoPath("package.json"), "utf8")) as Record<string, Record<string, string>>;
  for (const name of ["vscode-languageclient", "@vscode/vsce"]) assert.not.ok(root.dependencies[name] ?? root.devDependencies[name], name);
  assert.ok(readFileSync(join(dir, ".gitignore"), "utf8").split("\n").includes("*.vsix"), "the package is not committed");
});

extension.run();
