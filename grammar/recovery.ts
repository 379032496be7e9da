import { createTokenInstance, type IToken, type TokenType } from "./chevrotain.js";
import { Comment, LCurly, Newline, QuotedString, RCurly, UnterminatedString, Word } from "./tokens.js";

// Recovery of a lost `}` from indentation. Brace matching alone puts a missing `}` at the wrong
// block: the inner block swallows its parent's `}`, the parent swallows the rest of the file, and
// the error lands at the outermost `{` with a cascade of misplaced statements behind it. A
// conventionally indented file shows where the block really ended: the first line indented no
// deeper than the line holding its `{`. There a `}` is put back (a zero-width token the parser
// reports as an unclosed block), so everything after it parses as written.
//
// A block is judged by indentation when its body is indented deeper than its `{` line, or, in a
// file where some block's body is, when its body starts on the `{` line or it has none yet. The
// recovery is kept only when it reports no more brace errors than plain matching would, so files
// laid out any other way (everything at column 1, one-line blocks) get the plain diagnostics. A
// file whose braces balance is never judged: every `}` put back there would leave a real one stray.

/** What the parser says about a `}` put back by the recovery. */
export interface RestoredClose {
  /** The directive whose block lost its `}`, as written; null for a nameless block. */
  readonly name: string | null;
  /** The first line at the block's indentation or less: the block should have closed before it. */
  readonly nextLine: number;
}

export interface Recovered {
  readonly tokens: IToken[];
  readonly restored: ReadonlyMap<IToken, RestoredClose>;
}

interface OpenBlock {
  readonly index: number;
  /** Indentation of the line holding the `{`. */
  readonly indent: number;
  /**
   * Decided by the block's first body line: indented deeper than the `{` line, or not; or the body
   * starts on the `{` line itself (`match { query_exists x`).
   */
  body: "unknown" | "indented" | "flat" | "same-line";
}

interface PlannedClose {
  /** The token index the `}` goes before. */
  readonly before: number;
  readonly opener: number;
  readonly nextLine: number;
}

const TAB_WIDTH = 4;

/** The token stream with each `}` the indentation says is missing put back, or null if none is. */
export function restoreMissingCloses(tokens: readonly IToken[], text: string): Recovered | null {
  const plainErrors = braceErrors(tokens);
  // Not only quicker: the check below would refuse any recovery of a balanced file anyway.
  if (plainErrors === 0) return null;
  const plan = planCloses(tokens, text);
  if (plan.closes.length === 0 || plan.errors > plainErrors) return null;
  return applyCloses(tokens, plan.closes);
}

/** Unclosed and stray braces under plain matching. */
function braceErrors(tokens: readonly IToken[]): number {
  let depth = 0;
  let strays = 0;
  for (const token of tokens) {
    if (token.tokenType === LCurly) depth++;
    else if (token.tokenType === RCurly) depth > 0 ? depth-- : strays++;
  }
  return depth + strays;
}

/** Brace matching that also closes blocks the indentation shows have ended. */
function planCloses(tokens: readonly IToken[], text: string): { closes: PlannedClose[]; errors: number } {
  const stack: OpenBlock[] = [];
  const closes: PlannedClose[] = [];
  let strays = 0;
  let lineIndent = 0;
  // A block whose body starts on its `{` line, or that has no body line yet, shows no indentation of
  // its own: it is judged by indentation only in a file that shows it is indented.
  const fileIndented = showsIndentation(tokens, text);
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k];
    if (startsIndentedLine(tokens, k)) {
      lineIndent = indentOf(text, token.startOffset);
      const ended = endedBlocks(stack, token, lineIndent, fileIndented);
      for (let n = 0; n < ended; n++) {
        const block = stack.pop()!;
        closes.push({ before: closingPoint(tokens, text, k, block), opener: block.index, nextLine: token.startLine! });
      }
      noteBody(stack.at(-1), token, lineIndent);
    }
    if (token.tokenType === LCurly) stack.push({ index: k, indent: lineIndent, body: bodyOnOpeningLine(tokens, k) ? "same-line" : "unknown" });
    else if (token.tokenType === RCurly && stack.pop() === undefined) strays++;
  }
  return { closes, errors: closes.length + strays + stack.length };
}

/** The first token of a line that says something about nesting: comments are often misindented. */
function startsIndentedLine(tokens: readonly IToken[], k: number): boolean {
  const type = tokens[k].tokenType;
  return type !== Newline && type !== Comment && startsLine(tokens, k);
}

function startsLine(tokens: readonly IToken[], k: number): boolean {
  return k === 0 || tokens[k - 1].tokenType === Newline;
}

/**
 * How many blocks at the top of the stack a line starting with `token` at `indent` shows ended
 * without their `}`. A statement ends every indented block whose `{` line is indented as much or
 * more; a `}` ends those above the block whose `{` line is at exactly its indentation, if there is one.
 */
function endedBlocks(stack: readonly OpenBlock[], token: IToken, indent: number, fileIndented: boolean): number {
  let ended = 0;
  for (let i = stack.length - 1; i >= 0; i--) {
    const block = stack[i];
    if (token.tokenType === RCurly && block.indent === indent) return ended;
    const judged = block.body === "indented" || (fileIndented && block.body !== "flat");
    if (!judged || block.indent < indent) break;
    ended++;
  }
  return token.tokenType === RCurly ? 0 : ended;
}

/** The first line inside a block decides whether its body is indented. */
function noteBody(block: OpenBlock | undefined, token: IToken, indent: number): void {
  if (!block || block.body !== "unknown" || token.tokenType === RCurly) return;
  block.body = indent > block.indent ? "indented" : "flat";
}

/** Some line ending with `{` is followed by a statement indented deeper than it. */
function showsIndentation(tokens: readonly IToken[], text: string): boolean {
  let lineIndent = 0;
  let openerIndent: number | null = null;
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k];
    if (startsIndentedLine(tokens, k)) {
      lineIndent = indentOf(text, token.startOffset);
      if (openerIndent !== null && token.tokenType !== RCurly && lineIndent > openerIndent) return true;
    }
    if (token.tokenType !== Newline && token.tokenType !== Comment) openerIndent = token.tokenType === LCurly ? lineIndent : null;
  }
  return false;
}

/** A statement follows the `{` at `k` on its own line. */
function bodyOnOpeningLine(tokens: readonly IToken[], k: number): boolean {
  const next = tokens[k + 1]?.tokenType;
  return next !== undefined && next !== Newline && next !== Comment && next !== RCurly;
}

/**
 * Where the lost `}` goes: after the block's last statement, so blank lines and comments at the
 * block's indentation or less before the next line stay outside it.
 */
function closingPoint(tokens: readonly IToken[], text: string, k: number, block: OpenBlock): number {
  let i = k;
  while (i - 1 > block.index) {
    const previous = tokens[i - 1];
    const outsideComment = previous.tokenType === Comment && startsLine(tokens, i - 1) && indentOf(text, previous.startOffset) <= block.indent;
    if (previous.tokenType !== Newline && !outsideComment) break;
    i--;
  }
  return i;
}

/** Width of the whitespace before `offset` on its line; a tab reaches the next multiple of 4. */
function indentOf(text: string, offset: number): number {
  let start = offset;
  while (start > 0 && text[start - 1] !== "\n" && text[start - 1] !== "\r") start--;
  let width = 0;
  for (let i = start; i < offset; i++) width = text[i] === "\t" ? (Math.floor(width / TAB_WIDTH) + 1) * TAB_WIDTH : width + 1;
  return width;
}

function applyCloses(tokens: readonly IToken[], closes: readonly PlannedClose[]): Recovered {
  const out: IToken[] = [];
  const restored = new Map<IToken, RestoredClose>();
  let next = 0;
  for (let k = 0; k <= tokens.length; k++) {
    for (; next < closes.length && closes[next].before === k; next++) {
      const close = virtualClose(tokens[k - 1]);
      restored.set(close, { name: directiveName(tokens, closes[next].opener), nextLine: closes[next].nextLine });
      out.push(close);
    }
    if (k < tokens.length) out.push(tokens[k]);
  }
  return { tokens: out, restored };
}

/** A zero-width `}` right after `last`: a block ending on it ends where `last` does. */
function virtualClose(last: IToken): IToken {
  const line = last.endLine ?? last.startLine!;
  const column = last.endColumn ?? last.startColumn!;
  return createTokenInstance(RCurly, "", last.endOffset! + 1, last.endOffset!, line, line, column + 1, column);
}

const ARGUMENT_TYPES: readonly TokenType[] = [Word, QuotedString, UnterminatedString];

/** The first word of the statement whose `{` is at `opener`, as written. */
function directiveName(tokens: readonly IToken[], opener: number): string | null {
  let i = opener;
  while (i > 0 && ARGUMENT_TYPES.includes(tokens[i - 1].tokenType)) i--;
  return i === opener ? null : tokens[i].image;
}
