import { errorAt, type Diagnostic } from "./diagnostic.js";
import { SpoolfileParser, spanOfToken } from "./parser.js";
import { restoreMissingCloses } from "./recovery.js";
import type { IToken } from "./chevrotain.js";
import { LCurly, RCurly, spoolLexer } from "./tokens.js";
import type { SpoolfileTree } from "./tree.js";

export * from "./diagnostic.js";
export * from "./span.js";
export * from "./tree.js";
export { NAMELESS_BLOCK, unescapeString } from "./parser.js";

export interface ParseResult {
  readonly tree: SpoolfileTree;
  /** Syntax errors only; the tree is still complete enough to compile and report more. */
  readonly diagnostics: readonly Diagnostic[];
}

// Chevrotain parsers are built once (self-analysis is expensive) and reset per input.
let sharedParser: SpoolfileParser | undefined;

/** Parses Spoolfile text into a lossless tree. Never throws on bad input: problems are diagnostics. */
export function parseSpoolfile(text: string, file = "Spoolfile"): ParseResult {
  const parser = (sharedParser ??= new SpoolfileParser());
  const lexed = spoolLexer.tokenize(text);
  const diagnostics: Diagnostic[] = lexed.errors.map((e) =>
    errorAt({ file, line: e.line ?? 1, col: e.column ?? 1, offset: e.offset, endOffset: e.offset + e.length }, `unexpected character ${JSON.stringify(text.substr(e.offset, 1))}`, {
      code: "unexpected_character",
      subject: "",
      expected: "a name, a quoted string, a placeholder, {, }, ; or a comment",
      found: text.substr(e.offset, 1),
    }),
  );
  // The parser descends once per block level; input nested deeper than any Spoolfile needs is
  // refused at the brace that goes too deep instead of exhausting the stack.
  const tooDeep = firstTooDeepBrace(lexed.tokens);
  if (tooDeep) {
    diagnostics.push(errorAt(spanOfToken(tooDeep, file), `blocks nested more than ${MAX_BLOCK_DEPTH} levels deep`, { code: "nesting_too_deep", subject: "", expected: `blocks at most ${MAX_BLOCK_DEPTH} levels deep` }));
    return { tree: { file, items: [] }, diagnostics };
  }
  const recovered = restoreMissingCloses(lexed.tokens, text);
  parser.file = file;
  parser.diagnostics = [];
  parser.restoredCloses = recovered?.restored ?? new Map();
  parser.input = recovered?.tokens ?? lexed.tokens;
  const items = parser.fileRule();
  for (const e of parser.errors) {
    diagnostics.push(errorAt(spanOfToken(e.token, file), e.message));
  }
  // A loop, not push(...): a spread of 130k+ diagnostics exceeds V8's argument limit.
  for (const diagnostic of parser.diagnostics) diagnostics.push(diagnostic);
  return { tree: { file, items: items ?? [] }, diagnostics };
}

/** Deeper than any Spoolfile (routes sit at most four levels down) and far from the stack's limit. */
export const MAX_BLOCK_DEPTH = 64;

function firstTooDeepBrace(tokens: readonly IToken[]): IToken | undefined {
  let depth = 0;
  for (const token of tokens) {
    if (token.tokenType === LCurly && ++depth > MAX_BLOCK_DEPTH) return token;
    if (token.tokenType === RCurly && depth > 0) depth--;
  }
  return undefined;
}

/**
 * Decodes file bytes as strict UTF-8. Invalid bytes are reported at their line and column
 * (docs/spoolfile.md "Syntax") instead of being silently replaced.
 */
export function decodeSpoolfileBytes(bytes: Uint8Array, file: string): { text: string } | { diagnostic: Diagnostic } {
  try {
    return { text: new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes) };
  } catch {
    let i = 0;
    while (i < bytes.length) {
      const width = utf8SequenceLength(bytes, i);
      if (width === 0) break;
      i += width;
    }
    // Line, column and offset are counted on the decoded valid prefix exactly as the parser counts
    // them (CRLF, CR or LF end a line; UTF-16 columns and offsets), so every diagnostic agrees.
    const prefix = new TextDecoder("utf-8", { ignoreBOM: false }).decode(bytes.subarray(0, i));
    const lines = prefix.split(/\r\n|\r|\n/);
    const span = { file, line: lines.length, col: lines[lines.length - 1].length + 1, offset: prefix.length, endOffset: prefix.length + 1 };
    const found = i < bytes.length ? `byte 0x${bytes[i].toString(16).toUpperCase().padStart(2, "0")}` : "the end of the file";
    return { diagnostic: errorAt(span, `invalid UTF-8: expected UTF-8 text, found ${found}`, { code: "invalid_utf8", subject: "", expected: "UTF-8 text" }) };
  }
}

function utf8SequenceLength(bytes: Uint8Array, i: number): number {
  const b = bytes[i];
  const width = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
  if (width === 0 || i + width > bytes.length) return 0;
  for (let k = 1; k < width; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return 0;
  // The second byte's range also excludes overlong forms, UTF-16 surrogates and code points past
  // U+10FFFF; without this the scan walks past the byte the strict decoder rejected.
  const second = bytes[i + 1];
  if ((b === 0xe0 && second < 0xa0) || (b === 0xed && second > 0x9f) || (b === 0xf0 && second < 0x90) || (b === 0xf4 && second > 0x8f)) return 0;
  return width;
}
export { printTree, printHead } from "./print.js";
