// Property tests of the Spoolfile grammar with a seeded PRNG (fixed default seed for CI; explore with
// SPOOL_FUZZ_SEED=<n>, and scale the case counts with SPOOL_FUZZ_RUNS=<n>, default 4). A failure
// names the seed, the case and its input.
//   (a) Over the corpus and generated layout variations of it: fmt is a fixed point, comments
//       survive (count and text), the statements and comment places are unchanged, and layout-only
//       variations format to exactly the same text as the original.
//   (b) Random bytes and random token soups never throw: they give a tree and diagnostics with
//       valid positions; a soup that happens to parse obeys the properties of (a).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  commentTexts,
  decodeSpoolfileBytes,
  parseSpoolfile,
  printTree,
  renderDiagnostic,
  sortDiagnostics,
  type ParseResult,
  type SpoolfileTree,
} from "../../grammar/index.js";
import { fuzzSettings, runProperty, type Random } from "../helpers/seeded-random.js";
import { fmtCases, parseRepoFile } from "../helpers/spoolfile-corpus.js";
import {
  addTrailingWhitespace,
  augmentTree,
  commentsInDocumentOrder,
  messyPrint,
  reindentLines,
  toCrlf,
  toLf,
} from "../helpers/spoolfile-variations.js";
import { treeShape } from "../helpers/tree-shape.js";

const { seed, runs } = fuzzSettings(4);
const variationsPerFile = 12 * runs;
const soupCases = 1500 * runs;
const byteCases = 1500 * runs;

/** Runs one generated case; on failure the error names everything needed to replay it. */
function property(label: string, index: number, check: (rng: Random, show: (input: string) => void) => void): void {
  runProperty(seed, label, index, check);
}

function expectClean(result: ParseResult, what: string): SpoolfileTree {
  if (result.diagnostics.length > 0) {
    throw new Error(`${what} should parse cleanly: ${result.diagnostics.map(renderDiagnostic).join("; ")}`);
  }
  return result.tree;
}

/** fmt is a fixed point, keeps every comment, and keeps statements, quoting and comment places. */
function checkFormatting(tree: SpoolfileTree, source: string): string {
  const printed = printTree(tree);
  const reparsed = expectClean(parseSpoolfile(printed, "fmt.spool"), "fmt output");
  assert.is(printTree(reparsed), printed, "fmt(fmt(x)) == fmt(x)");
  assert.equal(commentTexts(reparsed.items), commentTexts(tree.items), `comments survive (source ${JSON.stringify(source.slice(0, 80))})`);
  assert.equal(treeShape(reparsed.items), treeShape(tree.items), "same statements, order, quoting and comment places");
  return printed;
}

const corpus = fmtCases()
  .map((c) => ({ name: c.name, ...parseRepoFile(c.inputFile) }))
  .filter((c) => c.text !== null && c.diagnostics.length === 0);

const variations = suite("fmt properties over the corpus and its variations");

variations("the corpus gives the variations something to vary", () => {
  assert.ok(corpus.length >= 40, `${corpus.length} clean corpus files`);
});

variations("text-level layout changes (indentation, trailing whitespace, CRLF) never change fmt output", () => {
  let index = 0;
  for (const file of corpus) {
    const canonical = printTree(file.parsed!.tree);
    for (let v = 0; v < 4 * runs; v++) {
      property(`layout variation of ${file.name}`, index++, (rng, show) => {
        let text = file.text!;
        if (rng.chance(0.7)) text = reindentLines(text, rng);
        if (rng.chance(0.7)) text = addTrailingWhitespace(text, rng);
        text = rng.chance(0.5) ? toCrlf(text) : toLf(text);
        show(text);
        const tree = expectClean(parseSpoolfile(text, "v.spool"), "variation");
        assert.is(printTree(tree), canonical, "layout-only change gives the same canonical text");
        checkFormatting(tree, text);
      });
    }
  }
});

variations("generated messy layouts of the corpus, with comments and blank lines added, format to the canonical text of their tree", () => {
  let index = 100_000;
  for (const file of corpus) {
    for (let v = 0; v < variationsPerFile; v++) {
      property(`messy variation of ${file.name}`, index++, (rng, show) => {
        const augmented = rng.chance(0.75) ? augmentTree(file.parsed!.tree, rng) : file.parsed!.tree;
        const text = messyPrint(augmented, rng);
        show(text);
        const tree = expectClean(parseSpoolfile(text, "v.spool"), "variation");
        assert.equal(treeShape(tree.items), treeShape(augmented.items), "the variation parses to the tree it was printed from");
        assert.equal(commentTexts(tree.items), commentsInDocumentOrder(augmented.items), "every comment is read back, in order");
        assert.is(printTree(tree), printTree(augmented), "fmt output depends only on the tree, not on its layout");
        checkFormatting(tree, text);
      });
    }
  }
});

// ---------------------------------------------------------------------------------------------
// (b) Garbage in: never a throw, always a tree and positioned diagnostics.

function lineCount(text: string): number {
  return text.split(/\r\n|\r|\n/).length;
}

function checkParseResult(text: string, file: string): ParseResult {
  const result = parseSpoolfile(text, file);
  assert.ok(Array.isArray(result.tree.items), "a tree comes back");
  assert.is(result.tree.file, file);
  for (const d of sortDiagnostics(result.diagnostics)) {
    const where = renderDiagnostic(d);
    assert.is(d.severity, "error", where);
    assert.ok(d.message.length > 0, where);
    assert.is(d.span.file, file, where);
    assert.ok(Number.isInteger(d.span.line) && d.span.line >= 1 && d.span.line <= lineCount(text), `line in range: ${where}`);
    assert.ok(Number.isInteger(d.span.col) && d.span.col >= 1, `column in range: ${where}`);
    assert.ok(d.span.offset >= 0 && d.span.offset <= text.length && d.span.endOffset >= d.span.offset, `offset in range: ${where}`);
  }
  printTree(result.tree);
  if (result.diagnostics.length === 0) checkFormatting(result.tree, text);
  return result;
}

const soupPieces: readonly string[] = [
  "listen", ":8080", "/hooks/x", "@m", "env:X", "raw:a-b", "file:/p", "a", "é", "🚀", "x{env.A}y", "{$X:d}", "{$X}", "{vars.V}",
  "{file./run/t}", "{env.}", "{$", "$X}", "{x", "\\", "\\n", "0", "5m", "2mb", "on",
  '"a b"', '"\\\\"', '"\\""', '"\\n\\t\\r"', '"C:\\path\\x"', '""', '"#"', '"{ ; }"', '"unterminated', '"ends\\', '"é"',
  "{", "{", "}", "}", ";", ";", "#", "# c {", "#}", "\n", "\n", "\n", "\r\n", "\r", " ", "  ", "\t", "\f", "\v", "\u00a0", "\u2028", "\ufeff", "\u0000",
];

function tokenSoup(rng: Random): string {
  let text = "";
  const pieces = rng.int(0, 40);
  for (let i = 0; i < pieces; i++) {
    text += rng.pick(soupPieces);
    if (rng.chance(0.6)) text += rng.pick([" ", " ", "\t", "\n"]);
  }
  return text;
}

function randomBytes(rng: Random): Uint8Array {
  const bytes = new Uint8Array(rng.int(0, 200));
  const common = [0x20, 0x0a, 0x0d, 0x09, 0x7b, 0x7d, 0x22, 0x23, 0x3b, 0x5c, 0x61, 0x2f, 0x24, 0x2e, 0x3a];
  for (let i = 0; i < bytes.length; i++) {
    bytes[i] = rng.chance(0.5) ? rng.pick(common) : rng.chance(0.5) ? rng.int(0x20, 0x7e) : rng.int(0, 255);
  }
  return bytes;
}

/**
 * The index of the first byte that starts no valid UTF-8 character, found without a UTF-8 table:
 * the longest prefix that decodes strictly, once no extension of up to 4 more bytes decodes.
 */
function firstInvalidByte(bytes: Uint8Array): number {
  const strict = new TextDecoder("utf-8", { fatal: true });
  const decodes = (end: number) => {
    try {
      strict.decode(bytes.subarray(0, end));
      return true;
    } catch {
      return false;
    }
  };
  let lastGood = 0;
  for (let end = 1; end <= bytes.length && end - lastGood <= 4; end++) if (decodes(end)) lastGood = end;
  return lastGood;
}

function randomUtf16(rng: Random): string {
  let text = "";
  for (let i = rng.int(0, 120); i > 0; i--) {
    text += rng.chance(0.7) ? rng.pick(soupPieces) : String.fromCharCode(rng.int(0, 0xffff));
  }
  return text;
}

const garbage = suite("the parser survives garbage");

garbage("random token soups give a tree and diagnostics with valid positions, never a throw", () => {
  let clean = 0;
  for (let i = 0; i < soupCases; i++) {
    property("token soup", 200_000 + i, (rng, show) => {
      const text = tokenSoup(rng);
      show(text);
      if (checkParseResult(text, "soup.spool").diagnostics.length === 0) clean++;
    });
  }
  // Both branches of checkParseResult must be exercised for the test to mean something.
  assert.ok(clean > soupCases / 20 && clean < soupCases, `${clean} of ${soupCases} soups parsed cleanly`);
});

garbage("random bytes decode strictly or report a positioned error, and decoded text parses without a throw", () => {
  let invalid = 0;
  for (let i = 0; i < byteCases; i++) {
    property("random bytes", 300_000 + i, (rng, show) => {
      const bytes = randomBytes(rng);
      show(Buffer.from(bytes).toString("latin1"));
      const decoded = decodeSpoolfileBytes(bytes, "bytes.spool");
      if ("diagnostic" in decoded) {
        invalid++;
        const bad = firstInvalidByte(bytes);
        const before = new TextDecoder("utf-8").decode(bytes.subarray(0, bad));
        const lines = before.split(/\r\n|\r|\n/);
        const { span, message } = decoded.diagnostic;
        assert.equal([span.line, span.col, span.offset], [lines.length, lines.at(-1)!.length + 1, before.length], renderDiagnostic(decoded.diagnostic));
        assert.ok(message.includes(`0x${bytes[bad].toString(16).toUpperCase().padStart(2, "0")}`), message);
        return;
      }
      checkParseResult(decoded.text, "bytes.spool");
    });
  }
  assert.ok(invalid > 0 && invalid < byteCases, `${invalid} of ${byteCases} byte strings were invalid UTF-8`);
});

garbage("random UTF-16 text, lone surrogates included, never makes the parser throw", () => {
  for (let i = 0; i < byteCases; i++) {
    property("random text", 400_000 + i, (rng, show) => {
      const text = randomUtf16(rng);
      show(text);
      checkParseResult(text, "text.spool");
    });
  }
});

variations.run();
garbage.run();
