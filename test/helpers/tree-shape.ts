// A layout-free view of a Spoolfile tree: what formatting must never change. Directive heads (raw
// text, so quoting counts), nesting, order, and where each comment is attached. Blank lines and
// positions are left out: those are layout.
import type { Item } from "../../grammar/index.js";

export type ShapeItem =
  | { readonly comment: string }
  | {
      readonly head: readonly string[];
      readonly trailing: string | null;
      readonly block: { readonly openComment: string | null; readonly items: readonly ShapeItem[] } | null;
    };

export function treeShape(items: readonly Item[]): ShapeItem[] {
  const shape: ShapeItem[] = [];
  for (const item of items) {
    if (item.kind === "blank") continue;
    if (item.kind === "comment") {
      shape.push({ comment: item.text });
      continue;
    }
    shape.push({
      head: [item.name, ...item.args].filter((a) => a !== null).map((a) => a!.raw),
      trailing: item.trailingComment?.text ?? null,
      block: item.block ? { openComment: item.block.openComment?.text ?? null, items: treeShape(item.block.items) } : null,
    });
  }
  return shape;
}
