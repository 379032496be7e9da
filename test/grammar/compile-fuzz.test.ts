// Property tests across grammar and compiler (seeded like fuzz.test.ts: SPOOL_FUZZ_SEED, SPOOL_FUZZ_RUNS):
//   - fmt(x) compiles to the same IR and the same diagnostics as x (docs/decisions.md
//     D3), over the corpus, its messy layout variations with comments and blank lines added,
//     and randomly mutated corpus configs;
//   - compiling anything (mutated configs, recovered trees of broken files, token soups) never
//     throws, and the config is null exactly when an error is reported.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile, type CompileOptions, type CompileResult } from "../../compiler/index.js";
import {
  hasErrors,
  parseSpoolfile,
  printTree,
  renderDiagnostic,
  type Arg,
  type Block,
  type Directive,
  type Item,
  type Span,
  type SpoolfileTree,
} from "../../grammar/index.js";
import { fuzzSettings, runProperty, type Random } from "../helpers/seeded-random.js";
import { fmtCases, parseRepoFile } from "../helpers/spoolfile-corpus.js";
import { augmentTree, messyPrint } from "../helpers/spoolfile-variations.js";

const { seed, runs } = fuzzSettings(4);

// A fixed environment and file reader keep the IR independent of the machine: unset variables
// compile to warnings, every `file:` and `{file.X}` reads the same text.
const options: CompileOptions = { env: { PULL_TOKEN: "pull-token", SIGN_2026: "sign-2026" }, readFile: () => "file-content\n" };

function property(label: string, index: number, check: (rng: Random, show: (input: string) => void) => void): void {
  runProperty(seed, label, index, check);
}

function lineCount(text: string): number {
  return text.split(/\r\n|\r|\n/).length;
}

/** Compiles and checks what must hold for any input. */
function compileChecked(text: string, file: string): CompileResult {
  const result = compileSpoolfile(text, file, options);
  assert.is(result.config === null, hasErrors(result.diagnostics), "config is null exactly when an error is reported");
  for (const d of result.diagnostics) {
    const where = renderDiagnostic(d);
    assert.ok(d.message.trim().length > 0, `a message: ${where}`);
    assert.ok(d.span.line >= 1 && d.span.line <= lineCount(text) && d.span.col >= 1, `a position inside the file: ${where}`);
  }
  return result;
}

/** Diagnostics without their positions (fmt moves text, so positions differ; what is said must not). */
function diagnosticContent(result: CompileResult): string[] {
  return result.diagnostics.map((d) => `${d.severity}: ${d.message.replace(/\S+:\d+:\d+/g, "<pos>")}`).sort();
}

function assertSameMeaning(actual: CompileResult, expected: CompileResult, what: string): void {
  assert.equal(actual.config, expected.config, `${what}: same IR`);
  assert.equal(diagnosticContent(actual), diagnosticContent(expected), `${what}: same diagnostics`);
}

const corpus = fmtCases()
  .map((c) => ({ name: c.name, ...parseRepoFile(c.inputFile) }))
  .filter((c) => c.text !== null && c.diagnostics.length === 0)
  .map((c) => ({ ...c, compiled: compileSpoolfile(c.text!, "Spoolfile", options) }));
const compilingCorpus = corpus.filter((c) => c.compiled.config !== null);

const fmtMeaning = suite("fmt keeps the meaning");

fmtMeaning("most of the corpus compiles, so the IR properties cover it", () => {
  assert.ok(compilingCorpus.length >= 45, `${compilingCorpus.length} corpus files compile: ${corpus.filter((c) => !c.compiled.config).map((c) => c.name).join(", ")}`);
});

fmtMeaning("fmt(x) compiles to the same IR and diagnostics as x, over the whole corpus", () => {
  for (const file of corpus) {
    const formatted = printTree(file.parsed!.tree);
    assertSameMeaning(compileChecked(formatted, "Spoolfile"), file.compiled, file.name);
  }
});

fmtMeaning("messy layouts with comments and blank lines added compile to the same IR, before and after fmt", () => {
  let index = 500_000;
  for (const file of compilingCorpus) {
    for (let v = 0; v < 3 * runs; v++) {
      property(`messy variation of ${file.name}`, index++, (rng, show) => {
        const text = messyPrint(augmentTree(file.parsed!.tree, rng), rng);
        show(text);
        const messy = compileChecked(text, "Spoolfile");
        assertSameMeaning(messy, file.compiled, "variation");
        const formatted = printTree(parseSpoolfile(text, "Spoolfile").tree);
        assertSameMeaning(compileChecked(formatted, "Spoolfile"), file.compiled, "fmt of the variation");
      });
    }
  }
});

// ---------------------------------------------------------------------------------------------
// Mutated configs: real directives in wrong places, wrong values, duplicates, missing pieces.

const span: Span = { file: "generated", line: 0, col: 0, offset: 0, endOffset: 0 };

function collect(items: readonly Item[], names: Set<string>, values: Set<string>): void {
  for (const item of items) {
    if (item.kind !== "directive") continue;
    if (item.name) names.add(item.name.raw);
    for (const a of item.args) values.add(a.raw);
    if (item.block) collect(item.block.items, names, values);
  }
}

const namePool = new Set<string>(["inbound", "outbound", "internal", "@nope", "/", "//x", '"/q"', "publish.direct", "bogus"]);
const valuePool = new Set<string>([
  "on", "off", "true", "0", "1", "-1", "1.5", "NaN", "1e309", "99999999999999999999", "0s", "-5s", "1h30m", "7d", "1024gb", "1025gb",
  "0kb", "12xb", '""', '"a b"', "env:", "raw:", "file:", "vault:x", "{vars.NOPE}", '"{vars.A}"', '"{vars.B}"', "{$UNSET}", "{env.UNSET}",
  "{file./nope}", "https://", "http://x", "ftp://x/y", "exec", "exponential", "max", "base", "cap", "jitter", ":0", ":65536", "[::1]:80",
  "localhost:1", "*", "*.x", "10.0.0.0/33", "@a", "@b", "/a", "/a/", "/a/../b", "sqlite", "memory", "postgres", "github", "stripe", "x:y",
]);
for (const file of corpus) collect(file.parsed!.tree.items, namePool, valuePool);
const names = [...namePool];
const values = [...valuePool];

function word(raw: string): Arg {
  return { kind: raw.startsWith('"') ? "string" : "word", raw, value: raw, span };
}

function randomDirective(rng: Random, depth: number): Directive {
  const args = Array.from({ length: rng.int(0, 3) }, () => word(rng.pick(values)));
  const block: Block | null = depth < 3 && rng.chance(0.4)
    ? { open: span, close: span, openComment: null, items: Array.from({ length: rng.int(0, 3) }, () => randomDirective(rng, depth + 1)) }
    : null;
  return { kind: "directive", name: word(rng.pick(names)), args, block, trailingComment: null, span };
}

/** Applies a few random edits at random depths of the tree. */
function mutate(tree: SpoolfileTree, rng: Random): SpoolfileTree {
  const mutateItems = (items: readonly Item[], depth: number): Item[] => {
    const out: Item[] = [];
    for (const item of items) {
      if (item.kind !== "directive") {
        out.push(item);
        continue;
      }
      const roll = rng.next();
      if (roll < 0.06) continue; // dropped
      let d: Directive = item;
      if (roll < 0.12) d = { ...d, name: word(rng.pick(names)) };
      else if (roll < 0.2 && d.args.length > 0) {
        const args = [...d.args];
        args[rng.int(0, args.length - 1)] = word(rng.pick(values));
        d = { ...d, args };
      } else if (roll < 0.24) d = { ...d, args: [...d.args, word(rng.pick(values))] };
      else if (roll < 0.28) d = { ...d, args: d.args.slice(0, -1) };
      else if (roll < 0.31) d = { ...d, block: null };
      if (d.block) d = { ...d, block: { ...d.block, items: mutateItems(d.block.items, depth + 1) } };
      out.push(d);
      if (rng.chance(0.04)) out.push(d); // duplicated
      if (rng.chance(0.04)) out.push(randomDirective(rng, depth));
    }
    return out;
  };
  return { file: tree.file, items: mutateItems(tree.items, 0) };
}

const robustness = suite("the compiler survives anything the parser accepts or recovers");

robustness("mutated corpus configs never make the compiler throw, and fmt never changes what they mean", () => {
  let index = 600_000;
  let valid = 0;
  let total = 0;
  for (const file of corpus) {
    for (let v = 0; v < 6 * runs; v++) {
      property(`mutation of ${file.name}`, index++, (rng, show) => {
        const mutated = mutate(file.parsed!.tree, rng);
        const canonicalText = printTree(mutated);
        show(canonicalText);
        const parsed = parseSpoolfile(canonicalText, "Spoolfile");
        if (parsed.diagnostics.length > 0) {
          // A mutation can leave a lone "{" path or similar; the recovered tree must still compile.
          compileChecked(canonicalText, "Spoolfile");
          return;
        }
        total++;
        const canonical = compileChecked(canonicalText, "Spoolfile");
        if (canonical.config) valid++;
        const messyText = messyPrint(parsed.tree, rng);
        show(messyText);
        assertSameMeaning(compileChecked(messyText, "Spoolfile"), canonical, "messy layout of the mutation");
      });
    }
  }
  assert.ok(valid > 0 && valid < total, `${valid} of ${total} mutated configs were valid: both outcomes must be exercised`);
});

const soupPieces: readonly string[] = [
  ...names.slice(0, 80), ...values.slice(0, 80), "{", "{", "}", "}", ";", "\n", "\n", "\n", '"unterminated', "# c", " ", "\t",
];

robustness("token soups and broken files compile without a throw (recovered trees included)", () => {
  for (let i = 0; i < 800 * runs; i++) {
    property("compile soup", 700_000 + i, (rng, show) => {
      let text = "";
      for (let n = rng.int(0, 60); n > 0; n--) text += rng.pick(soupPieces) + rng.pick([" ", " ", "\n", ""]);
      show(text);
      compileChecked(text, "Spoolfile");
    });
  }
});

fmtMeaning.run();
robustness.run();
