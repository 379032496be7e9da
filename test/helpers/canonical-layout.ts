// An independent check of the canonical layout docs/decisions.md D3 requires,
// written from the rules rather than from the printer, so a golden file blessed from a buggy
// printer still fails: 2-space indentation by depth, one statement per line, `{` ending its
// statement's line, `}` alone (an end-of-line comment may follow), at most one blank line in a row,
// none at the start or end of a block, one blank line after each top-level statement, no trailing
// whitespace, LF endings and a final newline.
import { Comment, LCurly, RCurly, Semi, spoolLexer } from "../../grammar/tokens.js";

/** Returns one message per violated rule (`line N: ...`); empty when the text is canonical. */
export function canonicalLayoutViolations(text: string): string[] {
  const problems: string[] = [];
  if (text === "") return problems;
  if (text.includes("\r")) problems.push("contains CR: canonical line endings are LF");
  if (!text.endsWith("\n")) problems.push("no final newline");
  const lines = text.split("\n").slice(0, -1);
  let depth = 0;
  let previousBlank = false;
  let previousOpened = false;
  let topLevelStatementEnded = false;
  lines.forEach((line, index) => {
    const at = `line ${index + 1}`;
    if (/[ \t]$/.test(line)) problems.push(`${at}: trailing whitespace`);
    if (line === "") {
      if (index === 0) problems.push(`${at}: blank line at the start of the file`);
      if (previousBlank) problems.push(`${at}: two blank lines in a row`);
      if (previousOpened) problems.push(`${at}: blank line at the start of a block`);
      if (index === lines.length - 1) problems.push(`${at}: blank line at the end of the file`);
      previousBlank = true;
      previousOpened = false;
      topLevelStatementEnded = false;
      return;
    }
    if (topLevelStatementEnded) problems.push(`${at}: a top-level statement must be followed by one blank line`);
    const tokens = spoolLexer.tokenize(line).tokens;
    const code = tokens.filter((t) => t.tokenType !== Comment);
    const closes = code.length > 0 && code[0].tokenType === RCurly;
    if (closes && previousBlank) problems.push(`${at}: blank line at the end of a block`);
    if (closes && code.length > 1) problems.push(`${at}: "}" is not alone on its line`);
    if (code.some((t) => t.tokenType === Semi)) problems.push(`${at}: ";" joins statements: one statement per line`);
    const opens = code.filter((t) => t.tokenType === LCurly);
    if (opens.length > 1 || (opens.length === 1 && code.at(-1)!.tokenType !== LCurly)) {
      problems.push(`${at}: "{" must end its statement's line, once`);
    }
    if (!closes && code.some((t) => t.tokenType === RCurly)) problems.push(`${at}: "}" after a statement on the same line`);
    const lineDepth = closes ? depth - 1 : depth;
    const indent = /^ */.exec(line)![0].length;
    if (/^\s*\t/.test(line) || indent !== 2 * Math.max(lineDepth, 0)) {
      problems.push(`${at}: indentation ${JSON.stringify(/^\s*/.exec(line)![0])}, expected ${2 * Math.max(lineDepth, 0)} spaces`);
    }
    if (closes) depth--;
    if (opens.length > 0) depth++;
    const isComment = code.length === 0;
    topLevelStatementEnded = !isComment && depth === 0 && index < lines.length - 1;
    previousOpened = opens.length > 0;
    previousBlank = false;
  });
  if (depth !== 0) problems.push(`unbalanced braces: depth ${depth} at the end`);
  return problems;
}
