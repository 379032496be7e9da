// A `}` lost in an indented Spoolfile is one error at the block that lost it, and the rest of the
// file parses as if the `}` had been there (issue 24); files laid out without indentation, and
// other brace errors, keep the diagnostics plain brace matching gives.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile, formatText } from "../../compiler/index.js";
import { directivesOf, parseSpoolfile, printTree, renderDiagnostic, sortDiagnostics, type Directive, type Item, type Span } from "../../grammar/index.js";
import { fmtCases, parseRepoFile } from "../helpers/spoolfile-corpus.js";

function errorsOf(text: string): string[] {
  return sortDiagnostics(parseSpoolfile(text, "t.spool").diagnostics).map(renderDiagnostic);
}

function lostClose(line: number, col: number, name: string, nextLine: number): string {
  return `t.spool:${line}:${col}: unclosed block: "${name}" opened here has no "}"; the next line at its indentation or less suggests it should have closed before line ${nextLine}`;
}

function unclosedAtEof(line: number, col: number): string {
  return `t.spool:${line}:${col}: unclosed block: expected "}" to close this "{" before the end of the file`;
}

/** The tree of `broken`, printed, is the tree of `fixed`: blocks, order, comments and blank lines. */
function assertShapedAs(broken: string, fixed: string): void {
  const intended = parseSpoolfile(fixed, "t.spool");
  assert.equal(intended.diagnostics.map(renderDiagnostic), [], "the fixed text parses cleanly");
  assert.is(printTree(parseSpoolfile(broken, "t.spool").tree), printTree(intended.tree));
}

const lines = (...text: string[]) => text.join("\n") + "\n";

// The file from issue 24: the deliver block never closes, so plain matching let it take the route's
// `}` and the route take the next route.
const observed = lines(
  "pull_api {",
  "  listen 127.0.0.1:9443",
  "  auth token raw:t",
  "}",
  "",
  "/github {",
  "  deliver https://example.com/hook {",
  "    timeout 5s",
  "}",
  "",
  "/jobs {",
  "  pull {",
  "    path /jobs",
  "  }",
  "}",
);

const observedFixed = observed.replace("    timeout 5s\n", "    timeout 5s\n  }\n");

const lost = suite("a lost } in an indented file");

lost("the issue's file: one error, at the deliver block's '{', and the route's own '}' closes the route", () => {
  assert.equal(errorsOf(observed), [lostClose(7, 36, "deliver", 9)]);
  assertShapedAs(observed, observedFixed);
});

lost("the issue's file compiles to that one error: no cascade from the compiler", () => {
  const result = compileSpoolfile(observed, "t.spool");
  assert.equal(result.diagnostics.map(renderDiagnostic), [lostClose(7, 36, "deliver", 9)]);
  assert.equal(compileSpoolfile(observedFixed, "t.spool").diagnostics, [], "the file with its } back is valid");
});

const depthCases: { name: string; broken: string; fixed: string; error: string }[] = [
  {
    name: "a route (depth 1) before the next route",
    broken: lines("/a {", "  pull {", "    path /a", "  }", "", "/b {", "  pull { path /b }", "}"),
    fixed: lines("/a {", "  pull {", "    path /a", "  }", "}", "", "/b {", "  pull { path /b }", "}"),
    error: lostClose(1, 4, "/a", 6),
  },
  {
    name: "a block at depth 2, before its parent's '}', at the end of the file",
    broken: lines("/a {", "  deliver http://x {", "    timeout 5s", "}"),
    fixed: lines("/a {", "  deliver http://x {", "    timeout 5s", "  }", "}"),
    error: lostClose(2, 20, "deliver", 4),
  },
  {
    name: "a block at depth 3, before its sibling, four-space indentation",
    broken: lines("defaults {", "    egress {", "        allow 10.0.0.1", "    deliver {", "        concurrency 8", "    }", "}", "ingress { listen :1 }"),
    fixed: lines("defaults {", "    egress {", "        allow 10.0.0.1", "    }", "    deliver {", "        concurrency 8", "    }", "}", "ingress { listen :1 }"),
    error: lostClose(2, 12, "egress", 4),
  },
  {
    name: "a block at depth 2, tab indentation",
    broken: lines("/a {", "\tdeliver http://x {", "\t\ttimeout 5s", "\tdeliver http://y {", "\t}", "}"),
    fixed: lines("/a {", "\tdeliver http://x {", "\t\ttimeout 5s", "\t}", "\tdeliver http://y {", "\t}", "}"),
    error: lostClose(2, 19, "deliver", 4),
  },
];

for (const c of depthCases) {
  lost(`${c.name}: one error at its '{', the rest as written, with LF or CRLF line ends`, () => {
    for (const crlf of [false, true]) {
      const eol = (text: string) => (crlf ? text.replace(/\n/g, "\r\n") : text);
      assert.equal(errorsOf(eol(c.broken)), [c.error]);
      assertShapedAs(eol(c.broken), eol(c.fixed));
    }
  });
}

lost("two blocks that lost their '}' before the same line are two errors, innermost first", () => {
  const broken = lines("/a {", "  deliver http://x {", "    timeout 5s", "/b {", "  pull { path /b }", "}");
  assert.equal(errorsOf(broken), [lostClose(1, 4, "/a", 4), lostClose(2, 20, "deliver", 4)]);
  assertShapedAs(broken, lines("/a {", "  deliver http://x {", "    timeout 5s", "  }", "}", "/b {", "  pull { path /b }", "}"));
});

lost("comments at the block's indentation or less before the next line stay outside it; deeper ones stay in", () => {
  const broken = lines("/a {", "  pull {", "    path /a", "  }", "  # about /a", "", "# about /b", "/b {", "  pull { path /b }", "}");
  assert.equal(errorsOf(broken), [lostClose(1, 4, "/a", 8)]);
  assertShapedAs(broken, lines("/a {", "  pull {", "    path /a", "  }", "  # about /a", "}", "", "# about /b", "/b {", "  pull { path /b }", "}"));
});

lost("in an indented file, a block whose body starts on its '{' line is judged by the next line too", () => {
  const broken = lines("/a {", "  match { query_exists debug; remote_ip 10.0.0.0/8", "  pull { path /a }", "}");
  assert.equal(errorsOf(broken), [lostClose(2, 9, "match", 3)]);
  assertShapedAs(broken, lines("/a {", "  match { query_exists debug; remote_ip 10.0.0.0/8 }", "  pull { path /a }", "}"));
});

lost("in an indented file, an empty block that lost its '}' ends before the next line at its indentation", () => {
  const broken = lines("ingress {", "", "pull_api {", "  listen :1", "}");
  assert.equal(errorsOf(broken), [lostClose(1, 9, "ingress", 3)]);
  assertShapedAs(broken, lines("ingress {", "}", "", "pull_api {", "  listen :1", "}"));
});

lost("a '}' indented between two open blocks' levels closes the innermost, as brace matching reads it", () => {
  const broken = lines("/a {", "  deliver http://x {", "    timeout 5s", " }", "/b {", "  pull { path /b }", "}");
  assert.equal(errorsOf(broken), [lostClose(1, 4, "/a", 5)]);
  assertShapedAs(broken, lines("/a {", "  deliver http://x {", "    timeout 5s", " }", "}", "/b {", "  pull { path /b }", "}"));
});

lost("a nameless block that lost its '}' is named as such", () => {
  assert.equal(errorsOf(lines("{", "  listen :1", "b 1")), [
    't.spool:1:1: unclosed block: this "{" has no "}"; the next line at its indentation or less suggests it should have closed before line 3',
    't.spool:1:1: expected a directive name before "{"',
  ]);
});

lost("the tree stays true to the text: the block has no '}' and ends at its last statement, and fmt refuses the file", () => {
  const route = directivesOf(parseSpoolfile(observed, "t.spool").tree.items)[1];
  const deliver: Directive = directivesOf(route.block!.items)[0];
  assert.is(deliver.block!.close, null);
  assert.is(observed.slice(deliver.span.offset, deliver.span.endOffset), "deliver https://example.com/hook {\n    timeout 5s");
  assert.ok(route.block!.close !== null, "the route keeps the '}' that is really its own");
  assert.is(formatText(observed, "t.spool").ok, false);
});

/** Every block in `items` with the line of its `}`. */
function closedBlocks(items: readonly Item[]): { open: Span; closeLine: number }[] {
  return directivesOf(items).flatMap((d) => (d.block?.close ? [{ open: d.block.open, closeLine: d.block.close.line }, ...closedBlocks(d.block.items)] : []));
}

lost("in every formatted corpus file, deleting any one '}' line is one error at its block, and the rest parses as written", () => {
  let restoredCount = 0;
  for (const c of fmtCases()) {
    const source = parseRepoFile(c.inputFile);
    if (!source.parsed || source.diagnostics.length > 0) continue;
    const canonical = printTree(source.parsed.tree);
    const canonicalLines = canonical.split("\n");
    for (const block of closedBlocks(parseSpoolfile(canonical, "t.spool").tree.items)) {
      if (canonicalLines[block.closeLine - 1].trim() !== "}") continue;
      const broken = canonicalLines.filter((_, i) => i !== block.closeLine - 1).join("\n");
      const where = `${c.name} without line ${block.closeLine}`;
      const diagnostics = parseSpoolfile(broken, "t.spool").diagnostics;
      assert.is(diagnostics.length, 1, `${where}: ${diagnostics.map(renderDiagnostic).join("; ")}`);
      assert.equal([diagnostics[0].span.line, diagnostics[0].span.col], [block.open.line, block.open.col], `${where}: ${renderDiagnostic(diagnostics[0])}`);
      const statementFollows = canonicalLines.slice(block.closeLine).some((line) => line.trim() !== "" && !line.trim().startsWith("#"));
      if (!statementFollows) continue;
      restoredCount++;
      assert.match(diagnostics[0].message, "should have closed before line", where);
      assert.is(printTree(parseSpoolfile(broken, "t.spool").tree), canonical, `${where}: the tree of the file with its } back`);
    }
  }
  // 209 when written: most blocks in the corpus are followed by more statements.
  assert.ok(restoredCount > 100, `${restoredCount} restored cases`);
});

const plain = suite("brace errors indentation cannot place keep their plain diagnostics");

plain("an unindented file: one unclosed block at the outer '{', as brace matching finds it", () => {
  assert.equal(errorsOf(lines("a {", "b {", "c 1", "}", "d 2")), [unclosedAtEof(1, 3)]);
});

plain("one-line blocks: one unclosed block at the '{' that brace matching leaves open", () => {
  assert.equal(errorsOf(lines("a { b { c }", "d { e }")), [unclosedAtEof(1, 3)]);
});

plain("a missing '}' with nothing after it at a lesser indentation is reported at the end of the file", () => {
  assert.equal(errorsOf(lines("/a {", "  pull {", "    path /a", "  }")), [unclosedAtEof(1, 4)]);
});

plain("a stray extra '}' is one error at that '}', and the next route is still a route", () => {
  const text = lines("/a {", "  pull {", "    path /a", "  }", "}", "}", "/b {", "  pull { path /b }", "}");
  assert.equal(errorsOf(text), ['t.spool:6:1: unexpected "}": no block is open here']);
  assert.equal(directivesOf(parseSpoolfile(text, "t.spool").tree.items).map((d) => d.name!.value), ["/a", "/b"]);
});

plain("balanced braces are never second-guessed, however they are indented", () => {
  assert.equal(errorsOf(lines("  a {", "    b 1", "}", "c {", "d 1", "      }", "e {", "    f {", "  g 1", "}", "}")), []);
});

plain("indentation recovery that would report more brace errors than plain matching is dropped", () => {
  // Reading line 4 as the end of both blocks would leave lines 5 and 6 as two stray braces.
  assert.equal(errorsOf(lines("a {", "  b {", "    c 1", "d 2", "  }", "}", "e {")), [unclosedAtEof(7, 3)]);
});

lost.run();
plain.run();
