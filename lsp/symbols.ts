// The outline: top-level blocks, named matchers and routes (inside their channel wrapper), each
// with the nested blocks it opens. Symbol names are directive names, route paths, matcher names and
// secret ids only, never an argument's value otherwise.
import type { TextDocument } from "vscode-languageserver-textdocument";
import { SymbolKind, type DocumentSymbol } from "./protocol.js";
import { directivesOf, type Directive, type Item } from "../compiler/index.js";
import { rangeOf } from "./analysis.js";
import { blockOpenedBy, CHANNEL_WRAPPER } from "./blocks.js";

function symbolName(d: Directive, key: string | undefined): string {
  const name = d.name!.value;
  if (key === "route" && !name.startsWith("/") && d.name!.kind === "word" && d.args[0]) return `${name} ${d.args[0].value}`;
  if (key === "secret" && d.args[0]) return `secret "${d.args[0].value}"`;
  return name;
}

function kindOf(key: string | undefined): DocumentSymbol["kind"] {
  if (key === "route") return SymbolKind.Function;
  if (key === "matcher") return SymbolKind.Interface;
  if (key === CHANNEL_WRAPPER) return SymbolKind.Namespace;
  return SymbolKind.Module;
}

function symbolsOf(doc: TextDocument, items: readonly Item[], block: string | undefined): DocumentSymbol[] {
  const out: DocumentSymbol[] = [];
  for (const d of directivesOf(items)) {
    if (!d.name || !d.block) continue;
    const key = block === undefined ? undefined : blockOpenedBy(block, d);
    out.push({
      name: symbolName(d, key),
      kind: kindOf(key),
      range: rangeOf(doc, d.span.offset, d.span.endOffset),
      selectionRange: rangeOf(doc, d.name.span.offset, d.name.span.endOffset),
      children: symbolsOf(doc, d.block.items, key),
    });
  }
  return out;
}

export function documentSymbols(doc: TextDocument, items: readonly Item[]): DocumentSymbol[] {
  return symbolsOf(doc, items, "top");
}
