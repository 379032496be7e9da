import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TextDocument } from "vscode-languageserver-textdocument";
import { formatText } from "../../compiler/index.js";
import { analyse, diagnose } from "../../lsp/analysis.js";
import { complete } from "../../lsp/completion.js";
import { codeActions, formattingEdits } from "../../lsp/edits.js";
import { hover } from "../../lsp/hover.js";
import { definition, references } from "../../lsp/navigation.js";
import { documentSymbols } from "../../lsp/symbols.js";
import { repoPath } from "../helpers/repo.js";

// Every handler of the language server on every Spoolfile of fixtures/ (valid, invalid and broken
// ones), at the start, second character and end of every word: none throws, and formatting gives
// the formatter's text exactly when the file parses. In process, so it can afford every position.
function spoolfiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? spoolfiles(path) : path.endsWith(".spool") ? [path] : [];
  });
}

const fixtures = suite("language server on every fixture");

fixtures("no handler throws at any word, and formatting matches the formatter", () => {
  const files = [...spoolfiles(repoPath("fixtures")), repoPath("Spoolfile")];
  assert.ok(files.length > 100);
  for (const file of files) {
    const name = relative(repoPath(), file);
    const text = readFileSync(file, "utf8");
    const doc = TextDocument.create(`file://${file}`, "spoolfile", 1, text);
    try {
      const analysis = analyse(doc);
      const diagnostics = diagnose(doc);
      codeActions(doc, diagnostics);
      documentSymbols(doc, analysis.items);
      const lines = text.split(/\r?\n/);
      lines.forEach((line, number) => {
        for (const m of line.matchAll(/\S+/g)) {
          for (const character of [m.index!, m.index! + 1, m.index! + m[0].length]) {
            const position = { line: number, character };
            hover(doc, analysis, position);
            complete(doc, analysis, position);
            definition(doc, analysis, position);
            references(doc, analysis, position, true);
          }
        }
      });
      const formatted = formatText(text, file);
      const edits = formattingEdits(doc);
      assert.is(TextDocument.applyEdits(doc, edits), formatted.ok ? formatted.text : text, name);
    } catch (error) {
      throw new Error(`${name}: ${(error as Error).stack}`);
    }
  }
});

fixtures.run();
