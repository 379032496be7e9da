// Where in the Spoolfile a position is: the block it is in (by the directive table's block keys,
// compiler/reference.ts) and the directive it is on. Works on the lossless tree, which the parser
// builds even for a file being typed (an unclosed block runs to the end of the file).
import { CHANNELS, directivesOf, findDirective, type Directive, type DirectiveInfo, type Item } from "../compiler/index.js";

/** A route channel wrapper (`internal { /a { … } }`) holds routes only. */
export const CHANNEL_WRAPPER = "channel";

/** The block key a directive's `{ … }` opens, given the block key the directive is written in. */
export function blockOpenedBy(parent: string, d: Directive): string | undefined {
  if (!d.name) return undefined;
  const name = d.name.value;
  if (parent === "top" || parent === CHANNEL_WRAPPER) {
    if (d.name.kind === "string" || name.startsWith("/")) return "route";
    if (parent === CHANNEL_WRAPPER) return undefined;
    if (name.startsWith("@")) return "matcher";
    if ((CHANNELS as readonly string[]).includes(name)) return d.args.length === 0 ? CHANNEL_WRAPPER : "route";
  }
  return rowOf(parent, d)?.opens;
}

/** The table's row for a directive written in block `parent`. */
export function rowOf(parent: string, d: Directive): DirectiveInfo | undefined {
  if (!d.name) return undefined;
  return findDirective(parent, d.name.value, d.args[0]?.value);
}

/** True when `offset` is inside the braces of `d`'s block. */
function insideBlock(d: Directive, offset: number): boolean {
  if (!d.block) return false;
  return offset > d.block.open.offset && (d.block.close === null || offset <= d.block.close.offset);
}

export interface Place {
  /** The block key at the position ("top" at the top level); undefined inside a block the table does not describe. */
  readonly block: string | undefined;
  /** The directives enclosing the position, outermost first, each with the block key it is written in. */
  readonly chain: readonly { readonly directive: Directive; readonly block: string | undefined }[];
}

/** The innermost block holding `offset`. */
export function placeAt(items: readonly Item[], offset: number): Place {
  const chain: { directive: Directive; block: string | undefined }[] = [];
  let block: string | undefined = "top";
  let list = items;
  for (;;) {
    const d = directivesOf(list).find((x) => insideBlock(x, offset));
    if (!d) return { block, chain };
    chain.push({ directive: d, block });
    block = block === undefined ? undefined : blockOpenedBy(block, d);
    list = d.block!.items;
  }
}

/** The directive whose name is at `offset`, with the block key it is written in. */
export function directiveNamedAt(items: readonly Item[], offset: number): { directive: Directive; block: string | undefined } | undefined {
  const place = placeAt(items, offset);
  const list = place.chain.length === 0 ? items : place.chain[place.chain.length - 1].directive.block!.items;
  const d = directivesOf(list).find((x) => x.name && offset >= x.name.span.offset && offset <= x.name.span.endOffset);
  return d ? { directive: d, block: place.block } : undefined;
}

/** Every directive of the tree, depth first, with the block key it is written in. */
export function* walk(items: readonly Item[], block: string | undefined = "top"): Generator<{ directive: Directive; block: string | undefined }> {
  for (const d of directivesOf(items)) {
    yield { directive: d, block };
    if (d.block) yield* walk(d.block.items, block === undefined ? undefined : blockOpenedBy(block, d));
  }
}
