// `spool lsp`: the Spoolfile language server on stdin/stdout (docs/editors.md). It loads the compiler
// and the language server library only; never the runtime.
import { startLanguageServer } from "../../lsp/server.js";

export function runLsp(): Promise<number> {
  return startLanguageServer();
}
