import { diffLines } from "diff";
import { readFileSync } from "node:fs";
import { formatText } from "./dist/compiler/index.js";
const t = readFileSync("fixtures/config/fmt/crlf-line-endings.spool", "utf8");
const f = formatText(t, "x");
console.log(JSON.stringify(t.slice(0,80)), JSON.stringify(f.text.slice(0,80)));
console.log(JSON.stringify(diffLines(t, f.text)).slice(0,600));
