// One mistake, one error (compiler/index.ts withoutConsequences): an unterminated string that swallowed
// a block's `}`, and a `{` put on the line after the statement it opens, are each reported once,
// where the mistake is, while unrelated errors elsewhere in the file are still reported.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile, renderDiagnostic } from "../../compiler/index.js";

const test = suite("one mistake, one error");

const lines = (...text: string[]) => text.join("\n") + "\n";
const errorsOf = (text: string) => compileSpoolfile(text, "t.spool").diagnostics.filter((d) => d.severity === "error").map(renderDiagnostic);
const TOKEN = "pull_api { auth token raw:t }";

test("a route's { on the next line is one error at the {, naming the line it belongs to", () => {
  assert.equal(errorsOf(lines(TOKEN, "/hooks/a", "{", "  pull { path /a }", "}")), [
    't.spool:3:1: a "{" must be on the line of the statement it opens: move it to the end of line 2 (/hooks/a { … })',
  ]);
  // Blank lines between change nothing; the block's own content is not reported on.
  assert.equal(errorsOf(lines(TOKEN, "/hooks/a", "", "  {", "  pull { path /a }", "}")), [
    't.spool:4:3: a "{" must be on the line of the statement it opens: move it to the end of line 2 (/hooks/a { … })',
  ]);
  // A top-level block too.
  assert.equal(errorsOf(lines(TOKEN, "ingress", "{", "  listen 127.0.0.1:8080", "}", "/a { pull { path /a } }")), [
    't.spool:3:1: a "{" must be on the line of the statement it opens: move it to the end of line 2 (ingress { … })',
  ]);
  // Moved where it belongs, the file is valid.
  assert.equal(errorsOf(lines(TOKEN, "/hooks/a {", "  pull { path /a }", "}")), []);
});

test("a route without a block and a nameless block apart from it stay two errors", () => {
  assert.equal(errorsOf(lines(TOKEN, "/hooks/a", "/hooks/b { pull { path /b } }", "{", "}")), [
    "t.spool:2:1: route /hooks/a needs a block: /hooks/a { … }",
    't.spool:4:1: expected a directive name before "{"',
  ]);
});

test("an unterminated string that took a block's } is the only error of its line", () => {
  assert.equal(errorsOf(lines(TOKEN, "/hooks/a {", '  pull { path "/a }', "}", "/hooks/b { pull { path /b } }")), [
    't.spool:3:15: unterminated string: expected a closing " before the end of the line',
  ]);
  // Closed, the file is valid.
  assert.equal(errorsOf(lines(TOKEN, "/hooks/a {", '  pull { path "/a" }', "}", "/hooks/b { pull { path /b } }")), []);
});

test("errors elsewhere in a file with an unterminated string are still reported", () => {
  assert.equal(errorsOf(lines(TOKEN, "/hooks/a {", '  pull { path "/a }', "}", "/hooks/b { pull { path /b } }", "/hooks/c { queue sqlite }")), [
    't.spool:3:15: unterminated string: expected a closing " before the end of the line',
    "t.spool:6:1: route /hooks/c needs pull { path … } or at least one deliver target",
  ]);
});

test.run();
