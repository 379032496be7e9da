// Formatting and code actions. Formatting is `spool config fmt`'s formatter (compiler/format.ts); a
// file that does not parse is left alone. The edits are the differences only, character by character
// inside the lines that changed, so the editor keeps its cursor and marks and a line the formatter did
// not touch (a secret's, say) is not sent back. A code action is offered for every diagnostic with a
// did-you-mean: it replaces the misspelt word with the compiler's suggestion.
import { diffArrays, diffLines } from "diff";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { CodeActionKind, type CodeAction, type Diagnostic, type TextEdit } from "./protocol.js";
import { formatText } from "../compiler/index.js";
import { pathOfUri, type DiagnosticData } from "./analysis.js";

/** Characters, with a CRLF as one: an LSP position cannot point between its two halves. */
function units(text: string): string[] {
  return text.match(/\r\n|[\s\S]/gu) ?? [];
}

/** Edits turning `before` into `after`, as offsets into `before`. */
function differences(before: string, after: string): { offset: number; endOffset: number; text: string }[] {
  const edits: { offset: number; endOffset: number; text: string }[] = [];
  let offset = 0;
  const add = (start: number, removed: string, added: string) => {
    let at = start;
    for (const part of diffArrays(units(removed), units(added))) {
      const value = part.value.join("");
      if (part.added) edits.push({ offset: at, endOffset: at, text: value });
      else if (part.removed) edits.push({ offset: at, endOffset: (at += value.length), text: "" });
      else at += value.length;
    }
  };
  const parts = diffLines(before, after);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (!part.added && !part.removed) offset += part.value.length;
    else if (part.removed) {
      const next = parts[i + 1];
      const added = next?.added ? next.value : "";
      if (next?.added) i++;
      add(offset, part.value, added);
      offset += part.value.length;
    } else add(offset, "", part.value);
  }
  return edits;
}

export function formattingEdits(doc: TextDocument): TextEdit[] {
  const before = doc.getText();
  const result = formatText(before, pathOfUri(doc.uri));
  if (!result.ok || result.text === before) return [];
  return differences(before, result.text).map((e) => ({ range: { start: doc.positionAt(e.offset), end: doc.positionAt(e.endOffset) }, newText: e.text }));
}

export function codeActions(doc: TextDocument, diagnostics: readonly Diagnostic[]): CodeAction[] {
  const actions: CodeAction[] = [];
  for (const diagnostic of diagnostics) {
    const suggestion = (diagnostic.data as DiagnosticData | undefined)?.suggestion;
    if (suggestion === undefined) continue;
    const written = doc.getText(diagnostic.range);
    const newText = written.startsWith('"') ? JSON.stringify(suggestion) : suggestion;
    actions.push({
      title: `Change to "${suggestion}"`,
      kind: CodeActionKind.QuickFix,
      diagnostics: [diagnostic],
      isPreferred: true,
      edit: { changes: { [doc.uri]: [{ range: diagnostic.range, newText }] } },
    });
  }
  return actions;
}
