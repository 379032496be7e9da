import { errorAt, NAMELESS_BLOCK, parseSpoolfile, sortDiagnostics, type Diagnostic } from "../grammar/index.js";
import { compileTree, type CompileResult } from "./compile.js";
import type { CompileOptions } from "./context.js";
import { readSpoolfile } from "./read.js";

export type { CompileOptions } from "./context.js";
export type { CompileResult } from "./compile.js";
export { CHANNELS, compileTree } from "./compile.js";
export { configFingerprint, readSpoolfile, type SpoolfileRead } from "./read.js";
export { formatText, type FormatResult } from "./format.js";
export { unifiedDiff } from "./diff.js";
export { diffConfigs, renderChanges, type ConfigChange } from "./semantic-diff.js";
export { semanticChanges } from "./diff-masking.js";
export { setRouteLabels, type EditResult, type RouteLabels } from "./edit.js";
export { LOG_DIAGNOSTICS_HINT, logSafeDiagnostics } from "./log-diagnostics.js";
export { redactSpoolfileText, spoolfileOutline, type OutlineEntry } from "./text-redact.js";
export { writeFileAtomically, replaceFileAtomically, type Replacement } from "./rewrite.js";
export { DEFAULTS } from "./defaults.js";
export { isLoopbackHost } from "./values.js";
export { readSecretFile } from "./secret-file.js";
export { parseEncryptionKey, SECRET_KEY_BYTES, SECRET_KEY_VARIABLE } from "./secret-key.js";
export { decodeStandardWebhooksKey, headerValueProblem, isHttpHeaderValue, isHttpToken, isValidLabel, LABEL_PATTERN, MAX_DURATION_TEXT, parseDurationMs, parseRfc3339Ms, pathCovers } from "./syntax.js";
export { routeTargets } from "./ir.js";
export type * from "./ir.js";

/** Spoolfile text → IR and diagnostics (syntax and meaning together). */
export function compileSpoolfile(text: string, file: string, options: CompileOptions = {}): CompileResult {
  const parsed = parseSpoolfile(text, file);
  // A file the parser refused whole (blocks nested too deep) has no tree to compile: compiling the
  // empty one would add a false "the config is empty".
  if (parsed.tree.items.length === 0 && parsed.diagnostics.length > 0) return { config: null, diagnostics: sortDiagnostics([...parsed.diagnostics]) };
  const compiled = compileTree(parsed.tree, options);
  if (parsed.diagnostics.length === 0) return compiled;
  return { config: null, diagnostics: sortDiagnostics(withoutConsequences(text, parsed.diagnostics, compiled.diagnostics)) };
}

const NEEDS_A_BLOCK = "needs a block: ";

/**
 * One mistake, one error: drops what a syntax error made the rest of the file report.
 * - An unterminated string runs to the end of its line, taking any `}` there with it: a block opened
 *   earlier on that line is then unclosed, and the string's value fails its own checks. Only the
 *   string is reported.
 * - A `{` on the line after the statement it was meant to open leaves that statement without a
 *   block and the `{` without a name: one error at the `{`, saying where it belongs.
 */
function withoutConsequences(text: string, syntax: readonly Diagnostic[], semantic: readonly Diagnostic[]): Diagnostic[] {
  const unterminated = syntax.filter((d) => d.code === "unterminated_string").map((d) => d.span);
  const fromString = (d: Diagnostic, sameValue: boolean) =>
    unterminated.some((at) => at.file === d.span.file && at.line === d.span.line && (sameValue ? at.col === d.span.col : d.span.col < at.col));
  const lines = text.split(/\r?\n/);
  const blankBetween = (from: number, to: number) => lines.slice(from, to - 1).every((line) => line.trim() === "");
  const movedBraces = new Map<Diagnostic, Diagnostic>();
  for (const nameless of syntax.filter((d) => d.code === "syntax_error" && d.message === NAMELESS_BLOCK)) {
    const owner = semantic.find(
      (d) => d.code === "missing_block" && d.span.file === nameless.span.file && d.span.line < nameless.span.line && blankBetween(d.span.line, nameless.span.line),
    );
    if (owner) movedBraces.set(nameless, owner);
  }
  const owners = new Set(movedBraces.values());
  const kept: Diagnostic[] = [];
  for (const d of syntax) {
    if (d.code === "unclosed_block" && fromString(d, false)) continue;
    const owner = movedBraces.get(d);
    if (!owner) {
      kept.push(d);
      continue;
    }
    const written = owner.message.includes(NEEDS_A_BLOCK) ? owner.message.slice(owner.message.indexOf(NEEDS_A_BLOCK) + NEEDS_A_BLOCK.length) : "{ … }";
    kept.push({
      ...d,
      expected: `the "{" at the end of line ${owner.span.line}`,
      message: `a "{" must be on the line of the statement it opens: move it to the end of line ${owner.span.line} (${written})`,
    });
  }
  for (const d of semantic) if (!owners.has(d) && !fromString(d, true)) kept.push(d);
  return kept;
}

/**
 * Reads (strict UTF-8) and compiles a Spoolfile. `text` and `fingerprint` (configFingerprint of the
 * bytes read) are null when the file could not be read.
 */
export function loadSpoolfile(path: string, options: CompileOptions = {}): CompileResult & { text: string | null; fingerprint: string | null } {
  const read = readSpoolfile(path);
  if ("reason" in read) {
    const { reason } = read;
    return { config: null, text: null, fingerprint: null, diagnostics: [errorAt({ file: path, line: 1, col: 1, offset: 0, endOffset: 0 }, `cannot read config: ${reason}`, { code: "config_unreadable", subject: "", expected: `a readable config file (${reason})` })] };
  }
  if ("diagnostic" in read) return { config: null, text: null, fingerprint: null, diagnostics: [read.diagnostic] };
  return { ...compileSpoolfile(read.text, path, options), text: read.text, fingerprint: read.fingerprint };
}
// The language server (lsp/) reads the lossless tree through the compiler too.
export { parseSpoolfile, directivesOf, type Arg, type Block, type Directive, type Item, type Span, type SpoolfileTree } from "../grammar/index.js";
export { BLOCKS, DIRECTIVES, directivesIn, findDirective, writtenForm, type BlockInfo, type DirectiveInfo } from "./reference.js";
// The runtime and the CLI read diagnostics through the compiler, never from grammar/ directly.
export { renderDiagnostic, hasErrors, DIAGNOSTIC_SENTENCES, type Diagnostic, type DiagnosticCode } from "../grammar/index.js";
