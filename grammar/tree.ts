import type { Span } from "./span.js";

// The lossless Spoolfile tree. Every statement, comment and blank line is kept, in source order,
// with its position; `print.ts` turns it back into canonical text and the compiler reads meaning
// from it. Trivia placement:
//   - an own-line comment is an item of the block (or file) it sits in;
//   - an end-of-line comment belongs to the statement that ends on that line (`trailingComment`,
//     printed after the arguments or after the closing `}`), or to the block whose `{` ends the line
//     (`Block.openComment`);
//   - a blank line is an item, so the author's paragraphs survive formatting.

export interface Arg {
  readonly kind: "word" | "string";
  /** The exact source text, quotes and escapes included: the formatter prints it unchanged. */
  readonly raw: string;
  /** The decoded value: quotes removed and escapes applied; placeholders are left for the compiler. */
  readonly value: string;
  readonly span: Span;
}

export interface CommentNode {
  readonly kind: "comment";
  /** The comment text from `#` to the end of the line, trailing whitespace removed. */
  readonly text: string;
  readonly span: Span;
}

export interface BlankLine {
  readonly kind: "blank";
  readonly span: Span;
}

export interface Block {
  readonly open: Span;
  /** Null when the file ended before the block was closed (a parse error is reported). */
  readonly close: Span | null;
  readonly openComment: CommentNode | null;
  readonly items: readonly Item[];
}

export interface Directive {
  readonly kind: "directive";
  /** The first word; null only for a recovered `{ … }` that had no name (a parse error is reported). */
  readonly name: Arg | null;
  readonly args: readonly Arg[];
  readonly block: Block | null;
  readonly trailingComment: CommentNode | null;
  /** From the name to the end of the last argument or of the closing `}`. */
  readonly span: Span;
}

export type Item = Directive | CommentNode | BlankLine;

export interface SpoolfileTree {
  readonly file: string;
  readonly items: readonly Item[];
}

export function directivesOf(items: readonly Item[]): Directive[] {
  return items.filter((item): item is Directive => item.kind === "directive");
}

/** Every comment's text in source order: used to prove that formatting keeps them all. */
export function commentTexts(items: readonly Item[]): string[] {
  const texts: { offset: number; text: string }[] = [];
  const visit = (list: readonly Item[]) => {
    for (const item of list) {
      if (item.kind === "comment") texts.push({ offset: item.span.offset, text: item.text });
      if (item.kind !== "directive") continue;
      if (item.trailingComment) texts.push({ offset: item.trailingComment.span.offset, text: item.trailingComment.text });
      if (item.block) {
        if (item.block.openComment) texts.push({ offset: item.block.openComment.span.offset, text: item.block.openComment.text });
        visit(item.block.items);
      }
    }
  };
  visit(items);
  return texts.sort((a, b) => a.offset - b.offset).map((t) => t.text);
}
