// The language server library, loaded with require(): it is CommonJS, and importing it as an ES
// module makes Node parse each of its ~70 modules for their export names, which tripled the time
// `spool lsp` takes to answer `initialize` (docs/decisions.md D143).
import { createRequire } from "node:module";
import type * as Lsp from "vscode-languageserver/node";

const lsp = createRequire(import.meta.url)("vscode-languageserver/node") as typeof Lsp;

export const { CodeActionKind, CompletionItemKind, createConnection, DiagnosticSeverity, MarkupKind, ProposedFeatures, StreamMessageReader, StreamMessageWriter, SymbolKind, TextDocuments, TextDocumentSyncKind } = lsp;
export type { CodeAction, CompletionItem, Diagnostic, DocumentSymbol, Hover, Location, Position, Range, TextEdit } from "vscode-languageserver/node";
