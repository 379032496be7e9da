import { errorAt, parseSpoolfile, sortDiagnostics } from "../grammar/index.js";
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
  return { config: null, diagnostics: sortDiagnostics([...parsed.diagnostics, ...compiled.diagnostics]) };
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
