// One document as the language server sees it: its lossless tree (for hover, completion, navigation
// and the outline) and, apart, the compiler's diagnostics turned into LSP diagnostics. A diagnostic's
// message is the compiler's log-safe one (its code's sentence, subject, what was expected and a
// did-you-mean, never a value of the file), so no secret written in the file or read from the
// environment can reach the editor through a message (docs/decisions.md D143); the range shows what
// it is about.
import { fileURLToPath } from "node:url";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { DiagnosticSeverity, type Diagnostic as LspDiagnostic, type Range } from "./protocol.js";
import { compileSpoolfile, logSafeDiagnostics, parseSpoolfile, type Diagnostic, type Item } from "../compiler/index.js";
import { nameSites, type NameSite } from "./names.js";

/** What hover, completion, navigation and the outline read: the tree and its names (parsing only). */
export interface Analysis {
  readonly version: number;
  readonly items: readonly Item[];
  readonly names: readonly NameSite[];
}

/** What a diagnostic carries for its code action: the known name the compiler suggests. */
export interface DiagnosticData {
  readonly suggestion?: string;
}

export function rangeOf(doc: TextDocument, offset: number, endOffset: number): Range {
  return { start: doc.positionAt(offset), end: doc.positionAt(Math.max(offset, endOffset)) };
}

/** The file path compile-time reads (`file:` secrets, `tls` files) are relative to. */
export function pathOfUri(uri: string): string {
  return uri.startsWith("file:") ? fileURLToPath(uri) : "Spoolfile";
}

function toLsp(doc: TextDocument, d: Diagnostic): LspDiagnostic {
  const data: DiagnosticData = d.suggestion === undefined ? {} : { suggestion: d.suggestion };
  return {
    range: rangeOf(doc, d.span.offset, d.span.endOffset),
    severity: d.severity === "error" ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
    code: d.code,
    source: "spool",
    message: d.message,
    data,
  };
}

export function analyse(doc: TextDocument): Analysis {
  const { tree } = parseSpoolfile(doc.getText(), pathOfUri(doc.uri));
  return { version: doc.version, items: tree.items, names: nameSites(tree.items) };
}

/** The compiler's diagnostics of the document (what `spool config validate` reports), log-safe. */
export function diagnose(doc: TextDocument): LspDiagnostic[] {
  const compiled = compileSpoolfile(doc.getText(), pathOfUri(doc.uri));
  return logSafeDiagnostics(compiled.diagnostics).map((d) => toLsp(doc, d));
}
