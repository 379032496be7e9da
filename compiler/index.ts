import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { decodeSpoolfileBytes, errorAt, parseSpoolfile, sortDiagnostics } from "../grammar/index.js";
import { compileTree, type CompileResult } from "./compile.js";
import type { CompileOptions } from "./context.js";

export type { CompileOptions } from "./context.js";
export type { CompileResult } from "./compile.js";
export { compileTree } from "./compile.js";
export { formatText, type FormatResult } from "./format.js";
export { unifiedDiff } from "./diff.js";
export { diffConfigs, renderChanges, type ConfigChange } from "./semantic-diff.js";
export { semanticChanges } from "./diff-masking.js";
export { setRouteLabels, type EditResult, type RouteLabels } from "./edit.js";
export { LOG_DIAGNOSTICS_HINT, logSafeDiagnostics, logSafeMessage } from "./log-diagnostics.js";
export { writeFileAtomically, replaceFileAtomically, type Replacement } from "./rewrite.js";
export { DEFAULTS } from "./defaults.js";
export { isLoopbackHost } from "./values.js";
export { readSecretFile } from "./secret-file.js";
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

/** The identity of a config file's content: sha256 of its bytes, hex (what `sha256sum` prints). */
export function configFingerprint(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Reads (strict UTF-8) and compiles a Spoolfile. `text` and `fingerprint` (configFingerprint of the
 * bytes read) are null when the file could not be read.
 */
export function loadSpoolfile(path: string, options: CompileOptions = {}): CompileResult & { text: string | null; fingerprint: string | null } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "file not found" : (error as Error).message;
    return { config: null, text: null, fingerprint: null, diagnostics: [errorAt({ file: path, line: 1, col: 1, offset: 0, endOffset: 0 }, `cannot read config: ${reason}`, { code: "config_unreadable", subject: "", expected: `a readable config file (${reason})` })] };
  }
  const decoded = decodeSpoolfileBytes(bytes, path);
  if ("diagnostic" in decoded) return { config: null, text: null, fingerprint: null, diagnostics: [decoded.diagnostic] };
  return { ...compileSpoolfile(decoded.text, path, options), text: decoded.text, fingerprint: configFingerprint(bytes) };
}
// The runtime reads diagnostics through the compiler, never from grammar/ directly.
export { renderDiagnostic, hasErrors, DIAGNOSTIC_CODES, DIAGNOSTIC_SENTENCES, type Diagnostic, type DiagnosticCode } from "../grammar/index.js";
