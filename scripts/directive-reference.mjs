// Rewrites the generated "Directive reference" section of docs/spoolfile.md from the directive table
// (compiler/reference.ts, built into dist/). Run after `npm run build` when the table changes;
// test/lsp/reference.test.ts fails while the docs and the table differ.
import { readFileSync, writeFileSync } from "node:fs";
import { referenceMarkdown } from "../dist/compiler/reference.js";

const path = new URL("../docs/spoolfile.md", import.meta.url);
const docs = readFileSync(path, "utf8");
const pattern = /(<!-- directive-reference:start[^\n]*-->\n)[\s\S]*?(<!-- directive-reference:end -->)/;
if (!pattern.test(docs)) throw new Error("docs/spoolfile.md has no directive-reference markers");
writeFileSync(path, docs.replace(pattern, (_, start, end) => `${start}\n${referenceMarkdown()}${end}`));
