// Completion: directive names valid in the block at the cursor, the values of a directive's closed
// set, and the names the file defines (`{vars.`, `match @`, `secret_ref "`). Only names from the
// directive table or the file's own definitions are offered, never a value written in the file.
import type { TextDocument } from "vscode-languageserver-textdocument";
import { CompletionItemKind, MarkupKind, type CompletionItem, type Position } from "./protocol.js";
import { directivesIn, findDirective, writtenForm, type DirectiveInfo } from "../compiler/index.js";
import type { Analysis } from "./analysis.js";
import { placeAt } from "./blocks.js";
import { describe } from "./hover.js";
import type { NameKind } from "./names.js";

function definedNames(analysis: Analysis, kind: NameKind): CompletionItem[] {
  const names = new Set(analysis.names.filter((s) => s.kind === kind && s.definition).map((s) => s.name));
  return [...names].map((name) => ({ label: name, kind: kind === "var" ? CompletionItemKind.Variable : CompletionItemKind.Reference }));
}

function directiveItem(row: DirectiveInfo): CompletionItem {
  const label = row.sub ? `${row.name} ${row.sub}` : row.name;
  return {
    label,
    kind: row.opens ? CompletionItemKind.Module : CompletionItemKind.Property,
    detail: writtenForm(row),
    documentation: { kind: MarkupKind.Markdown, value: describe(row) },
  };
}

function valueItems(values: readonly string[]): CompletionItem[] {
  return values.map((value) => ({ label: value, kind: CompletionItemKind.EnumMember }));
}

export function complete(doc: TextDocument, analysis: Analysis, position: Position): CompletionItem[] {
  const offset = doc.offsetAt(position);
  const lineText = doc.getText({ start: { line: position.line, character: 0 }, end: position });
  if (/\{vars\.[A-Za-z0-9_]*$/.test(lineText)) return definedNames(analysis, "var");
  // The statement being typed: from the last `{`, `}` or `;` on the line (outside quotes, roughly).
  const statement = lineText.split(/[{};]/).pop() ?? "";
  if (statement.includes("#")) return [];
  const words = statement.trimStart().split(/\s+/).filter((w) => w !== "");
  const typing = statement !== "" && !/\s$/.test(statement);
  const index = typing ? words.length - 1 : words.length;
  if (index > 0 && /(^|\s)secret_ref(\s+"?[^"\s]*"?)*\s+"?[^"\s]*$/.test(statement)) return definedNames(analysis, "secret");
  if (index > 0 && words[0] === "match" && (words[index] ?? "").startsWith("@")) return definedNames(analysis, "matcher").map((i) => ({ ...i, label: `@${i.label}` }));
  const block = placeAt(analysis.items, offset).block;
  if (block === undefined) return [];
  if (index === 0) return directivesIn(block).map(directiveItem);
  const rows = directivesIn(block).filter((r) => r.name === words[0]);
  if (rows.length === 0) return [];
  if (index === 1) {
    const subs = rows.filter((r) => r.sub).map((r) => r.sub!);
    const plain = rows.find((r) => !r.sub);
    return valueItems([...subs, ...(plain?.values ?? [])]);
  }
  if (index === 2) {
    const row = findDirective(block, words[0], words[1]);
    if (row?.sub === words[1] && row.values) return valueItems(row.values);
  }
  return [];
}
