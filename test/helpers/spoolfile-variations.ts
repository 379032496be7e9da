// Generated variations of a Spoolfile for property tests. A variation keeps the statements,
// their order, their quoting and the place of every comment, and changes only what docs/decisions.md D3
// calls layout: indentation (spaces and tabs), statements joined with ";" or after "}" on one line,
// one-line blocks, runs of blank lines (also whitespace-only), trailing whitespace, LF/CRLF/mixed
// line endings, a missing final newline. `augmentTree` adds comments and blank lines at random
// places first, so the variations also exercise every comment position.
import type { Block, BlankLine, CommentNode, Directive, Item, Span, SpoolfileTree } from "../../grammar/index.js";
import type { Random } from "./seeded-random.js";

const syntheticSpan: Span = { file: "generated", line: 0, col: 0, offset: 0, endOffset: 0 };

/** Every comment's text in document order (own-line, after "{", inside, after the statement or "}"). */
export function commentsInDocumentOrder(items: readonly Item[]): string[] {
  const texts: string[] = [];
  for (const item of items) {
    if (item.kind === "comment") texts.push(item.text);
    if (item.kind !== "directive") continue;
    if (item.block) {
      if (item.block.openComment) texts.push(item.block.openComment.text);
      texts.push(...commentsInDocumentOrder(item.block.items));
    }
    if (item.trailingComment) texts.push(item.trailingComment.text);
  }
  return texts;
}

const commentAlphabet = [..."abcxyz019 -_./:#;{}\"\\'=é✓", "\t", "{env.X}", "}}", "# #"];

/** A comment text as the parser keeps it: from "#" to the end of the line, no trailing whitespace. */
export function randomCommentText(rng: Random): string {
  let body = "";
  const length = rng.int(0, 12);
  for (let i = 0; i < length; i++) body += rng.pick(commentAlphabet);
  return ("#" + (rng.chance(0.7) ? " " : "") + body).trimEnd();
}

function comment(rng: Random): CommentNode {
  return { kind: "comment", text: randomCommentText(rng), span: syntheticSpan };
}

const blank: BlankLine = { kind: "blank", span: syntheticSpan };

/** A copy of the tree with comments (own-line, end-of-line, after "{") and blank lines added at random. */
export function augmentTree(tree: SpoolfileTree, rng: Random, rate = 0.15): SpoolfileTree {
  const augmentItems = (items: readonly Item[]): Item[] => {
    const out: Item[] = [];
    for (const item of items) {
      if (rng.chance(rate)) out.push(rng.chance(0.5) ? comment(rng) : blank);
      if (item.kind !== "directive") {
        out.push(item);
        continue;
      }
      let block: Block | null = item.block;
      if (block) {
        block = {
          ...block,
          openComment: block.openComment ?? (rng.chance(rate) ? comment(rng) : null),
          items: augmentItems(block.items),
        };
      }
      const directive: Directive = {
        ...item,
        block,
        trailingComment: item.trailingComment ?? (rng.chance(rate) ? comment(rng) : null),
      };
      out.push(directive);
    }
    if (rng.chance(rate)) out.push(rng.chance(0.5) ? comment(rng) : blank);
    return out;
  };
  return { file: tree.file, items: augmentItems(tree.items) };
}

/** Prints the tree with a random, valid, non-canonical layout. Parsing the result gives the same tree. */
export function messyPrint(tree: SpoolfileTree, rng: Random): string {
  const lineEnding = rng.pick(["lf", "crlf", "mixed"] as const);
  let text = "";
  // Where the writer stands: at the start of a line, in the middle of one, or after a comment
  // (which runs to the end of the line, so a line break must come next).
  let position: "lineStart" | "midLine" | "afterComment" = "lineStart";
  // Read through a function: the helpers below move the position, which flow analysis cannot see.
  const at = () => position;
  // True when the last thing written was a statement without a block: the next statement on the
  // same line would become its arguments, so it needs a ";" first.
  let needsSemicolon = false;

  const spaces = (min: number, max: number) => {
    let s = "";
    const n = rng.int(min, max);
    for (let i = 0; i < n; i++) s += rng.chance(0.8) ? " " : "\t";
    return s;
  };
  const newline = () => {
    if (rng.chance(0.2)) text += spaces(1, 3); // trailing whitespace
    text += lineEnding === "lf" ? "\n" : lineEnding === "crlf" ? "\r\n" : rng.pick(["\n", "\r\n"]);
    position = "lineStart";
    needsSemicolon = false;
  };
  const startStatement = () => {
    if (at() === "afterComment") newline();
    if (at() === "midLine") {
      if (needsSemicolon || rng.chance(0.3)) {
        text += spaces(0, 1) + ";".repeat(rng.int(1, 2));
        if (rng.chance(0.3)) {
          newline();
        }
      } else if (rng.chance(0.4)) {
        newline();
      }
    }
    if (at() === "lineStart") text += spaces(0, 6);
    else text += spaces(rng.chance(0.8) ? 1 : 0, 2);
  };
  const writeComment = (c: CommentNode) => {
    text += spaces(at() === "midLine" ? (rng.chance(0.8) ? 1 : 0) : 0, 3) + c.text;
    position = "afterComment";
  };

  const writeItems = (items: readonly Item[]) => {
    for (const item of items) {
      if (item.kind === "blank") {
        if (at() !== "lineStart") newline();
        const empties = rng.int(1, 3);
        for (let i = 0; i < empties; i++) {
          if (rng.chance(0.3)) text += spaces(1, 3);
          newline();
        }
        continue;
      }
      if (item.kind === "comment") {
        if (at() !== "lineStart") newline();
        text += spaces(0, 6);
        writeComment(item);
        continue;
      }
      startStatement();
      const words = [item.name, ...item.args].filter((a) => a !== null).map((a) => a!.raw);
      text += words.map((w, i) => (i === 0 ? w : spaces(1, 3) + w)).join("");
      position = "midLine";
      if (item.block) {
        // `{` may touch the last word: a bare word never ends in "{", and a space follows the "{".
        text += (words.length > 0 && rng.chance(0.2) ? "" : spaces(1, 2)) + "{";
        if (item.block.openComment) writeComment(item.block.openComment);
        else if (rng.chance(0.5)) newline();
        else text += spaces(1, 2);
        needsSemicolon = false;
        if (at() === "lineStart" && item.block.items.length > 0 && rng.chance(0.3)) text += spaces(0, 4);
        writeItems(item.block.items);
        if (at() === "afterComment" || (at() === "midLine" && rng.chance(0.4))) newline();
        if (at() === "lineStart") text += spaces(0, 6);
        else text += spaces(1, 2);
        text += "}";
        position = "midLine";
        needsSemicolon = false;
      } else {
        needsSemicolon = true;
      }
      if (item.trailingComment) writeComment(item.trailingComment);
      else if (rng.chance(0.15)) text += spaces(0, 1) + ";";
    }
  };

  writeItems(tree.items);
  if (at() === "afterComment" || (at() === "midLine" && rng.chance(0.85))) newline();
  for (let i = rng.int(0, 2); i > 0; i--) newline();
  return text;
}

/** Text-level variations that must not change the canonical output at all. */
export function reindentLines(text: string, rng: Random): string {
  return text
    .split("\n")
    .map((line) => {
      const body = line.replace(/^[ \t]+/, "");
      if (body === "" || body === "\r") return body;
      let indent = "";
      for (let i = rng.int(0, 8); i > 0; i--) indent += rng.chance(0.7) ? " " : "\t";
      return indent + body;
    })
    .join("\n");
}

export function addTrailingWhitespace(text: string, rng: Random): string {
  return text.replace(/\r?\n/g, (ending) => (rng.chance(0.5) ? rng.pick([" ", "  ", "\t", " \t "]) : "") + ending);
}

export function toCrlf(text: string): string {
  return text.replace(/\r?\n/g, "\r\n");
}

export function toLf(text: string): string {
  return text.replace(/\r\n/g, "\n");
}
