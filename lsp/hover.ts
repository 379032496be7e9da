// Hover on a directive's name: its line from the directive table (how it is written, what it does,
// its default and the values it takes). Nothing of the file but the directive's name is shown.
import type { TextDocument } from "vscode-languageserver-textdocument";
import { MarkupKind, type Hover, type Position } from "./protocol.js";
import { writtenForm, type DirectiveInfo } from "../compiler/index.js";
import { rangeOf, type Analysis } from "./analysis.js";
import { directiveNamedAt, rowOf } from "./blocks.js";

/** The Markdown a directive's row reads as, in hover and in completion details. */
export function describe(row: DirectiveInfo): string {
  const lines = [`\`${writtenForm(row)}\`${row.repeatable ? " (repeatable)" : ""}`, "", row.description, "", `Default: ${row.default}`];
  if (row.values) lines.push("", `Values: ${row.values.map((v) => `\`${v}\``).join(", ")}`);
  return lines.join("\n");
}

export function hover(doc: TextDocument, analysis: Analysis, position: Position): Hover | null {
  const at = directiveNamedAt(analysis.items, doc.offsetAt(position));
  if (!at || at.block === undefined) return null;
  const row = rowOf(at.block, at.directive);
  if (!row) return null;
  const name = at.directive.name!;
  return { contents: { kind: MarkupKind.Markdown, value: describe(row) }, range: rangeOf(doc, name.span.offset, name.span.endOffset) };
}
