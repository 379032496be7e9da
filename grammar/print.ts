import type { Directive, Item, SpoolfileTree } from "./tree.js";

// The canonical layout (docs/decisions.md D3): 2-space indentation, one statement
// per line, `{` on its statement's line, `}` alone on its line, at most one blank line in a row, one
// blank line between top-level blocks, no trailing whitespace, a final newline. Order, comments and
// quoting are the author's: arguments print from their raw source text.

const INDENT = "  ";

export function printTree(tree: SpoolfileTree): string {
  const lines: string[] = [];
  printItems(tree.items, 0, lines);
  return lines.length === 0 ? "" : lines.join("\n") + "\n";
}

/** The statement line of a directive: its name and arguments, single-spaced, as written. */
export function printHead(directive: Directive): string {
  return [directive.name, ...directive.args].filter((a) => a !== null).map((a) => a!.raw).join(" ");
}

function printItems(items: readonly Item[], depth: number, lines: string[]): void {
  const indent = INDENT.repeat(depth);
  let previous: Item | undefined;
  let pendingBlank = false;
  for (const item of items) {
    if (item.kind === "blank") {
      // Collapsed to one, and dropped at the start of a block.
      if (previous) pendingBlank = true;
      continue;
    }
    // Top-level blocks are separated by exactly one blank line.
    if (depth === 0 && previous?.kind === "directive") pendingBlank = true;
    if (pendingBlank) lines.push("");
    pendingBlank = false;
    if (item.kind === "comment") lines.push(indent + item.text);
    else printDirective(item, depth, lines);
    previous = item;
  }
}

function printDirective(directive: Directive, depth: number, lines: string[]): void {
  const indent = INDENT.repeat(depth);
  const trailing = directive.trailingComment ? ` ${directive.trailingComment.text}` : "";
  const head = printHead(directive);
  if (!directive.block) {
    lines.push(indent + head + trailing);
    return;
  }
  const openComment = directive.block.openComment ? ` ${directive.block.openComment.text}` : "";
  lines.push(`${indent}${head}${head ? " " : ""}{${openComment}`);
  printItems(directive.block.items, depth + 1, lines);
  lines.push(`${indent}}${trailing}`);
}
