// Go to definition and find references for `{vars.NAME}`, named matchers and `secret_ref "ID"`.
import type { TextDocument } from "vscode-languageserver-textdocument";
import type { Location, Position } from "./protocol.js";
import { rangeOf, type Analysis } from "./analysis.js";
import { siteAt, type NameSite } from "./names.js";

function location(doc: TextDocument, site: NameSite): Location {
  return { uri: doc.uri, range: rangeOf(doc, site.offset, site.endOffset) };
}

function sameName(a: NameSite, b: NameSite): boolean {
  return a.kind === b.kind && a.name === b.name;
}

export function definition(doc: TextDocument, analysis: Analysis, position: Position): Location[] {
  const at = siteAt(analysis.names, doc.offsetAt(position));
  if (!at) return [];
  return analysis.names.filter((s) => s.definition && sameName(s, at)).map((s) => location(doc, s));
}

export function references(doc: TextDocument, analysis: Analysis, position: Position, includeDeclaration: boolean): Location[] {
  const at = siteAt(analysis.names, doc.offsetAt(position));
  if (!at) return [];
  return analysis.names.filter((s) => sameName(s, at) && (includeDeclaration || !s.definition)).map((s) => location(doc, s));
}
