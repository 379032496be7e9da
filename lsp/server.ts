// `spool lsp`: the Spoolfile language server over stdio (docs/editors.md). The handlers are the
// modules beside this one; this file only wires them to the connection. Diagnostics follow each
// change after a short pause, so a burst of keystrokes compiles once.
import { TextDocument } from "vscode-languageserver-textdocument";
import { createConnection, ProposedFeatures, StreamMessageReader, StreamMessageWriter, TextDocuments, TextDocumentSyncKind } from "./protocol.js";
import { analyse, diagnose, type Analysis } from "./analysis.js";
import { complete } from "./completion.js";
import { codeActions, formattingEdits } from "./edits.js";
import { hover } from "./hover.js";
import { definition, references } from "./navigation.js";
import { documentSymbols } from "./symbols.js";

const DIAGNOSTICS_PAUSE_MS = 120;
/** How long after stdin ends the server waits for the messages already read to be handled. */
const END_GRACE_MS = 500;

/**
 * Serves until the client says `exit` (the library then exits the process: 0 after `shutdown`, 1
 * without) or its end of stdin closes; resolves with the exit code for the latter (1: the client went
 * away without asking for a shutdown).
 */
export function startLanguageServer(input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stdout): Promise<number> {
  const connection = createConnection(ProposedFeatures.all, new StreamMessageReader(input), new StreamMessageWriter(output));
  let shutdown = false;
  connection.onShutdown(() => {
    shutdown = true;
  });
  const documents = new TextDocuments(TextDocument);
  const analyses = new Map<string, Analysis>();
  const timers = new Map<string, NodeJS.Timeout>();

  /** The document's analysis for its current version (made now when a change has not been analysed yet). */
  const analysisOf = (doc: TextDocument): Analysis => {
    const cached = analyses.get(doc.uri);
    if (cached && cached.version === doc.version) return cached;
    const fresh = analyse(doc);
    analyses.set(doc.uri, fresh);
    return fresh;
  };
  const publish = (doc: TextDocument) => {
    timers.delete(doc.uri);
    void connection.sendDiagnostics({ uri: doc.uri, version: doc.version, diagnostics: diagnose(doc) });
  };
  const schedule = (doc: TextDocument, pauseMs: number) => {
    clearTimeout(timers.get(doc.uri));
    timers.set(doc.uri, setTimeout(() => { const current = documents.get(doc.uri); if (current) publish(current); }, pauseMs));
  };

  connection.onInitialize(() => ({
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      documentFormattingProvider: true,
      hoverProvider: true,
      completionProvider: { triggerCharacters: [".", "@", '"', " "] },
      definitionProvider: true,
      referencesProvider: true,
      documentSymbolProvider: true,
      codeActionProvider: { codeActionKinds: ["quickfix"] },
    },
    serverInfo: { name: "spool" },
  }));

  documents.onDidOpen(({ document }) => schedule(document, 0));
  documents.onDidChangeContent(({ document }) => schedule(document, DIAGNOSTICS_PAUSE_MS));
  documents.onDidClose(({ document }) => {
    clearTimeout(timers.get(document.uri));
    timers.delete(document.uri);
    analyses.delete(document.uri);
    void connection.sendDiagnostics({ uri: document.uri, diagnostics: [] });
  });

  const withDoc = <T>(uri: string, empty: T, run: (doc: TextDocument) => T): T => {
    const doc = documents.get(uri);
    return doc ? run(doc) : empty;
  };
  connection.onDocumentFormatting(({ textDocument }) => withDoc(textDocument.uri, [], formattingEdits));
  connection.onHover(({ textDocument, position }) => withDoc(textDocument.uri, null, (doc) => hover(doc, analysisOf(doc), position)));
  connection.onCompletion(({ textDocument, position }) => withDoc(textDocument.uri, [], (doc) => complete(doc, analysisOf(doc), position)));
  connection.onDefinition(({ textDocument, position }) => withDoc(textDocument.uri, [], (doc) => definition(doc, analysisOf(doc), position)));
  connection.onReferences(({ textDocument, position, context }) => withDoc(textDocument.uri, [], (doc) => references(doc, analysisOf(doc), position, context.includeDeclaration)));
  connection.onDocumentSymbol(({ textDocument }) => withDoc(textDocument.uri, [], (doc) => documentSymbols(doc, analysisOf(doc).items)));
  connection.onCodeAction(({ textDocument, context }) => withDoc(textDocument.uri, [], (doc) => codeActions(doc, context.diagnostics)));

  const closed = new Promise<number>((resolve) => {
    connection.onExit(() => resolve(shutdown ? 0 : 1));
    // The messages read before the end are still queued: an `exit` among them ends the process
    // first. Without one, the client went away; the grace lets the queue drain.
    input.once("end", () => setTimeout(() => resolve(shutdown ? 0 : 1), END_GRACE_MS));
  });
  documents.listen(connection);
  connection.listen();
  return closed;
}
