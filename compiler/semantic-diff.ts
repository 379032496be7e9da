import { CONFIG, ROUTE, type BlockNode, type FieldNode, type KeyedNode, type LeafNode, type ListNode } from "./diff-names.js";
import { changedValues, formatValue, sameValue } from "./diff-values.js";
import type { SpoolConfig } from "./ir.js";

export interface ConfigChange {
  readonly kind: "added" | "removed" | "changed";
  /** Spoolfile directives: `route /hooks/github`, `pull_api › max_batch`, `route /x › deliver https://a › timeout`. */
  readonly path: string;
  readonly before?: string;
  readonly after?: string;
}

/** Path segments joined as printed. */
const SEP = " › ";

/**
 * The changes between two configs, named by Spoolfile directive (diff-names.ts): routes by path,
 * targets, matchers, secrets and vars by name, everything else by field. `shownName` is how a name
 * will be printed (expansionMasker): two targets that print the same are the same target when their
 * order is compared, and a target renamed only where it is not shown is one `~` line.
 */
export function diffConfigs(before: SpoolConfig, after: SpoolConfig, shownName: (name: string) => string = (name) => name): ConfigChange[] {
  const changes: ConfigChange[] = [];
  const walker = new Walker(changes, shownName);
  walker.block(CONFIG, before, after, []);
  const newByPath = new Map(after.routes.map((r) => [r.path, r]));
  const oldByPath = new Map(before.routes.map((r) => [r.path, r]));
  for (const r of before.routes) if (!newByPath.has(r.path)) changes.push({ kind: "removed", path: `route ${r.path}` });
  // First match wins: the order of routes decides where a request goes.
  diffOrder(before.routes.map((r) => r.path), after.routes.map((r) => r.path), "route order", changes);
  for (const r of after.routes) {
    const old = oldByPath.get(r.path);
    if (!old) {
      changes.push({ kind: "added", path: `route ${r.path}` });
      continue;
    }
    // Fan-out copies are stored, and their ids answered, in target order.
    if (old.mode.kind === "deliver" && r.mode.kind === "deliver") {
      diffOrder(old.mode.targets.map((t) => t.target), r.mode.targets.map((t) => t.target), `route ${r.path}${SEP}target order`, changes, shownName);
    }
    walker.block(ROUTE, old, r, [`route ${r.path}`]);
  }
  return changes;
}

/**
 * A change when the names present in both lists come in a different order (additions and removals
 * are reported on their own). Names are matched as `shownName` prints them, and printed as they are.
 */
function diffOrder(before: readonly string[], after: readonly string[], path: string, out: ConfigChange[], shownName: (name: string) => string = (name) => name): void {
  const kept = (names: readonly string[], other: readonly string[]) => {
    const shownOther = new Set(other.map(shownName));
    return names.filter((name) => shownOther.has(shownName(name)));
  };
  const oldOrder = kept(before, after);
  const newOrder = kept(after, before);
  if (oldOrder.some((name, i) => shownName(name) !== shownName(newOrder[i]))) out.push({ kind: "changed", path, before: JSON.stringify(oldOrder), after: JSON.stringify(newOrder) });
}

type Side = unknown;

/** Walks two values along the names table; an absent side (undefined, or a block that is null) is an addition or removal. */
class Walker {
  constructor(private readonly out: ConfigChange[], private readonly shownName: (name: string) => string) {}

  field(node: FieldNode | undefined, key: string, a: Side, b: Side, path: string[]): void {
    // A field missing from the table: named as the IR does (which the diff-names test refuses), its value not shown.
    if (node === undefined) {
      if (JSON.stringify(a) !== JSON.stringify(b)) this.out.push({ kind: "changed", path: join(path, key) });
    } else if ("skip" in node) return;
    else if ("kind" in node) this.leaf(node, a, b, path);
    else if ("fields" in node) this.block(node, a, b, path);
    else if ("each" in node && "name" in node) this.list(node, a, b, path);
    else this.keyed(node, a, b, path);
  }

  leaf(node: LeafNode, a: Side, b: Side, parent: string[]): void {
    const path = join(parent, node.name);
    const shown = (v: unknown) => (v === null || (Array.isArray(v) && v.length === 0) ? undefined : v);
    if (a === undefined && b === undefined) return;
    if (a === undefined) {
      // In a block that was not there before: a field it leaves unset is not news.
      if (shown(b) !== undefined) this.out.push({ kind: "added", path, after: formatValue(node.kind, b) });
    } else if (b === undefined) {
      if (shown(a) !== undefined) this.out.push({ kind: "removed", path, before: node.kind === "hidden" ? undefined : formatValue(node.kind, a) });
    } else if (!sameValue(node.kind, a, b)) {
      this.out.push({ kind: "changed", path, ...changedValues(node.kind, a, b) });
    }
  }

  block(node: BlockNode, a: Side, b: Side, parent: string[]): void {
    const left = asRecord(a);
    const right = asRecord(b);
    if (left === undefined && right === undefined) return;
    const path = node.name === "" ? parent : [...parent, node.name];
    const keys = new Set([...Object.keys(left ?? {}), ...Object.keys(right ?? {})]);
    for (const key of keys) this.field(node.fields[key], key, left?.[key], right?.[key], path);
  }

  list(node: ListNode, a: Side, b: Side, parent: string[]): void {
    const left = Array.isArray(a) ? a : [];
    const right = Array.isArray(b) ? b : [];
    for (let i = 0; i < Math.max(left.length, right.length); i++) {
      const entry = [...parent, `${node.name} #${i + 1}`];
      if ("kind" in node.each) this.leaf({ name: "", kind: node.each.kind }, left[i], right[i], entry);
      else this.block(node.each, left[i], right[i], entry);
    }
  }

  /** Named things: an added or removed one is one line; one renamed only where it is not shown is one `~` line. */
  keyed(node: KeyedNode, a: Side, b: Side, parent: string[]): void {
    const left = byKey(node, a);
    const right = byKey(node, b);
    const each = node.each;
    if ("kind" in each) {
      // vars: each value by name.
      for (const key of new Set([...left.keys(), ...right.keys()])) this.leaf(each, left.get(key), right.get(key), [...parent, node.label(key)]);
      return;
    }
    const oldKeyOf = this.renamedOnlyWhereHidden([...left.keys()].filter((k) => !right.has(k)), [...right.keys()].filter((k) => !left.has(k)));
    const renamedFrom = new Set(oldKeyOf.values());
    for (const key of left.keys()) if (!right.has(key) && !renamedFrom.has(key)) this.out.push({ kind: "removed", path: join(parent, node.label(key)) });
    for (const [key, value] of right) {
      const path = [...parent, node.label(key)];
      const oldKey = left.has(key) ? key : oldKeyOf.get(key);
      if (oldKey === undefined) this.out.push({ kind: "added", path: join(path, "") });
      else {
        if (oldKey !== key) this.out.push({ kind: "changed", path: join(path, "") });
        this.block(each, left.get(oldKey), value, path);
      }
    }
  }

  /**
   * Removed and added names that print the same, one of each: the same thing, its name changed
   * behind a placeholder or in a URL's query. By the new name, the old one.
   */
  private renamedOnlyWhereHidden(removed: string[], added: string[]): Map<string, string> {
    const oldKeyOf = new Map<string, string>();
    for (const from of removed) {
      const matches = added.filter((to) => this.shownName(to) === this.shownName(from));
      const rivals = removed.filter((other) => this.shownName(other) === this.shownName(from));
      if (matches.length === 1 && rivals.length === 1) oldKeyOf.set(matches[0], from);
    }
    return oldKeyOf;
  }
}

function join(parent: readonly string[], name: string): string {
  return (name === "" ? parent : [...parent, name]).join(SEP);
}

function asRecord(v: Side): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null ? (v as Record<string, unknown>) : undefined;
}

function byKey(node: KeyedNode, v: Side): Map<string, unknown> {
  if (Array.isArray(v)) return new Map(v.map((entry: Record<string, unknown>) => [node.keyOf ? node.keyOf(entry) : String(entry), entry]));
  return new Map(Object.entries(asRecord(v) ?? {}));
}

export function renderChanges(changes: readonly ConfigChange[]): string {
  return changes
    .map((c) =>
      c.kind === "added"
        ? `+ ${c.path}${c.after !== undefined ? ` = ${c.after}` : ""}`
        : c.kind === "removed"
          ? `- ${c.path}${c.before !== undefined ? ` (was ${c.before})` : ""}`
          : c.before === undefined && c.after === undefined
            ? `~ ${c.path} (changed where it is not shown)`
            : `~ ${c.path}: ${c.before} -> ${c.after}`,
    )
    .join("\n");
}
