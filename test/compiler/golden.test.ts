import { readdirSync, readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile, formatText } from "../../compiler/index.js";
import { renderDiagnostic } from "../../grammar/index.js";
import { repoPath } from "../helpers/repo.js";

// Golden corpus of the compiler: invalid files with their exact diagnostics (positions included),
// valid files with their exact IR. Compiled with an empty environment and no file access, so the
// results do not depend on the machine.
const env = {};
const readFile = (): string => {
  throw new Error("fixtures read no files");
};

const invalid = suite("compiler golden: invalid configs report every error with its position");
const invalidDir = "fixtures/config/invalid";
for (const name of readdirSync(repoPath(invalidDir)).filter((f) => f.endsWith(".spool")).sort()) {
  invalid(name, () => {
    const file = `${invalidDir}/${name}`;
    const result = compileSpoolfile(readFileSync(repoPath(file), "utf8"), file, { env, readFile });
    const expected = readFileSync(repoPath(file.replace(/\.spool$/, ".expected.txt")), "utf8").trimEnd().split("\n");
    const errors = result.diagnostics.filter((d) => d.severity === "error").map(renderDiagnostic);
    assert.equal(errors, expected);
    assert.is(result.config, null, "an invalid file yields no IR");
  });
}
invalid.run();

const valid = suite("compiler golden: valid configs compile to their IR, unchanged by fmt");
const validDir = "fixtures/config/valid";
for (const name of readdirSync(repoPath(validDir)).filter((f) => f.endsWith(".spool")).sort()) {
  valid(name, () => {
    const file = `${validDir}/${name}`;
    const text = readFileSync(repoPath(file), "utf8");
    const result = compileSpoolfile(text, file, { env, readFile });
    assert.ok(result.config, result.diagnostics.map(renderDiagnostic).join("\n"));
    const expected = JSON.parse(readFileSync(repoPath(file.replace(/\.spool$/, ".ir.json")), "utf8"));
    assert.equal(JSON.parse(JSON.stringify(result.config)), expected);
    const formatted = formatText(text, file);
    assert.ok(formatted.ok);
    if (formatted.ok) assert.equal(compileSpoolfile(formatted.text, file, { env, readFile }).config, result.config, "fmt keeps the IR");
  });
}
valid.run();
