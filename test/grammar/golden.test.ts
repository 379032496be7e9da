// The golden Spoolfile corpus (fixtures/config/): formatting cases must print exactly their
// expected canonical text, stay a fixed point and keep every comment; syntax-error cases must
// report exactly their expected diagnostics. SPOOL_UPDATE_GOLDEN=1 rewrites the expected files
// from the current output (review the diff before committing).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { formatText } from "../../compiler/index.js";
import { commentTexts, parseSpoolfile, printTree } from "../../grammar/index.js";
import { canonicalLayoutViolations } from "../helpers/canonical-layout.js";
import {
  fmtCases,
  parseRepoFile,
  readRepoText,
  renderDiagnostics,
  repoRoot,
  syntaxErrorCases,
  updateGolden,
} from "../helpers/spoolfile-corpus.js";
import { treeShape } from "../helpers/tree-shape.js";

const formatting = suite("golden fmt corpus");

const fmtCorpus = fmtCases();
const errorCorpus = syntaxErrorCases();

formatting("the corpus is large enough to mean something", () => {
  assert.ok(fmtCorpus.length >= 40, `only ${fmtCorpus.length} fmt cases`);
  assert.ok(errorCorpus.length >= 10, `only ${errorCorpus.length} syntax-error cases`);
});

for (const testCase of fmtCorpus) {
  formatting(`fmt ${testCase.name}: prints the expected canonical text, a fixed point, every comment kept`, () => {
    const input = parseRepoFile(testCase.inputFile);
    assert.equal(renderDiagnostics(input.diagnostics), "", "a formatting case must parse without errors");
    const output = printTree(input.parsed!.tree);
    if (updateGolden) writeFileSync(join(repoRoot, testCase.expectedFile), output);
    const expected = readRepoText(testCase.expectedFile);
    assert.fixture(output, expected);
    assert.equal(formatText(input.text!, testCase.inputFile), { ok: true, text: expected }, "config fmt's entry point agrees");

    // The expected file itself must follow the layout rules of docs/decisions.md D3, whoever wrote it.
    assert.equal(canonicalLayoutViolations(expected), [], `${testCase.expectedFile} is not canonical`);

    const reparsed = parseSpoolfile(expected, testCase.expectedFile);
    assert.equal(reparsed.diagnostics, [], "canonical output must parse");
    assert.fixture(printTree(reparsed.tree), expected, "fmt(fmt(x)) == fmt(x)");

    assert.equal(commentTexts(reparsed.tree.items), commentTexts(input.parsed!.tree.items), "comments survive, count and text");
    assert.equal(treeShape(reparsed.tree.items), treeShape(input.parsed!.tree.items), "same statements, order, quoting and comment places");
  });
}

// The layout check must be able to fail, or passing it proves nothing about the expected files.
formatting("the canonical layout check rejects each non-canonical layout it knows", () => {
  const cases: [string, RegExp][] = [
    ["a {\n    b\n}\n", /indentation/],
    ["a {\n\tb\n}\n", /indentation/],
    ["a {\n  b \n}\n", /trailing whitespace/],
    ["a {\n  b; c\n}\n", /one statement per line/],
    ["a { b\n}\n", /"\{" must end/],
    ["a {\n  b }\n", /after a statement/],
    ["a {\n  b\n} c\n", /not alone/],
    ["a {\n  b\n\n\n  c\n}\n", /two blank lines/],
    ["a {\n\n  b\n}\n", /start of a block/],
    ["a {\n  b\n\n}\n", /end of a block/],
    ["a {\n}\nb {\n}\n", /followed by one blank line/],
    ["a {\n}", /final newline/],
    ["a {\r\n}\r\n", /CR/],
    ["a {\n}\n\n", /end of the file/],
  ];
  for (const [text, problem] of cases) {
    const problems = canonicalLayoutViolations(text);
    assert.ok(problems.some((p) => problem.test(p)), `${JSON.stringify(text)} should violate ${problem}: got ${JSON.stringify(problems)}`);
  }
  assert.equal(canonicalLayoutViolations("# c\na { # x\n  b \"{ } ;\" # y\n} # z\n\n# end\n"), []);
});

const syntaxErrors = suite("golden syntax-error corpus");

for (const testCase of errorCorpus) {
  syntaxErrors(`syntax errors ${testCase.name}: every error reported with its position, nothing thrown`, () => {
    const result = parseRepoFile(testCase.inputFile);
    const rendered = renderDiagnostics(result.diagnostics);
    if (updateGolden) writeFileSync(join(repoRoot, testCase.expectedFile), rendered);
    assert.ok(result.diagnostics.length > 0, "a syntax-error case must report at least one error");
    assert.ok(result.diagnostics.every((d) => d.severity === "error"));
    assert.fixture(rendered, readRepoText(testCase.expectedFile));
    if (result.text !== null) {
      const formatted = formatText(result.text, testCase.inputFile);
      assert.is(formatted.ok, false, "a file that does not parse is not formatted");
    }
  });
}

formatting.run();
syntaxErrors.run();
