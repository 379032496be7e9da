import { hasErrors, parseSpoolfile, printTree, type Diagnostic } from "../grammar/index.js";

export type FormatResult = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

/** Canonical text of a Spoolfile; a file that does not parse is not formatted. */
export function formatText(text: string, file: string): FormatResult {
  const { tree, diagnostics } = parseSpoolfile(text, file);
  if (hasErrors(diagnostics)) return { ok: false, diagnostics };
  return { ok: true, text: printTree(tree) };
}
