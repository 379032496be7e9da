// The names a Spoolfile defines and uses: `{vars.NAME}` (defined in `vars { }`), named matchers
// (`@name { }`, used by `match @name`) and secrets (`secret "ID"`, used by `secret_ref "ID"`).
// Definition and references go by these; only names and their positions are kept, never a value.
import type { Arg, Item } from "../compiler/index.js";
import { walk } from "./blocks.js";

export type NameKind = "var" | "matcher" | "secret";

export interface NameSite {
  readonly kind: NameKind;
  readonly name: string;
  readonly offset: number;
  readonly endOffset: number;
  readonly definition: boolean;
}

const VAR_PLACEHOLDER = /\{vars\.([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Every definition and use of a var, matcher or secret, in source order. */
export function nameSites(items: readonly Item[]): NameSite[] {
  const sites: NameSite[] = [];
  const site = (kind: NameKind, name: string, offset: number, endOffset: number, definition: boolean) => sites.push({ kind, name, offset, endOffset, definition });
  const placeholders = (arg: Arg) => {
    for (const m of arg.raw.matchAll(VAR_PLACEHOLDER)) {
      const start = arg.span.offset + m.index! + "{vars.".length;
      site("var", m[1], start, start + m[1].length, false);
    }
  };
  for (const { directive: d, block } of walk(items)) {
    if (!d.name) continue;
    const name = d.name.value;
    if (block === "top" && name.startsWith("@") && d.name.kind === "word") site("matcher", name.slice(1), d.name.span.offset + 1, d.name.span.endOffset, true);
    if (block === "top" && name === "vars" && d.block) {
      for (const v of walk(d.block.items, undefined)) if (v.directive.name) site("var", v.directive.name.value, v.directive.name.span.offset, v.directive.name.span.endOffset, true);
    }
    if (block === "secrets" && name === "secret" && d.args[0]) site("secret", d.args[0].value, ...inner(d.args[0]), true);
    if (block === "route" && name === "match") {
      for (const a of d.args) if (a.kind === "word" && a.value.startsWith("@")) site("matcher", a.value.slice(1), a.span.offset + 1, a.span.endOffset, false);
    }
    const refsFrom = name === "secret_ref" ? 0 : d.args.findIndex((a) => a.kind === "word" && a.value === "secret_ref") + 1;
    if (refsFrom >= 0 && (name === "secret_ref" || refsFrom > 0)) for (const a of d.args.slice(refsFrom)) site("secret", a.value, ...inner(a), false);
    placeholders(d.name);
    for (const a of d.args) placeholders(a);
  }
  return sites.sort((a, b) => a.offset - b.offset);
}

/** The span of an argument's text inside its quotes. */
function inner(arg: Arg): [number, number] {
  return arg.kind === "string" ? [arg.span.offset + 1, arg.span.endOffset - 1] : [arg.span.offset, arg.span.endOffset];
}

/** The site at `offset`, if the position is on a name. */
export function siteAt(sites: readonly NameSite[], offset: number): NameSite | undefined {
  return sites.find((s) => offset >= s.offset && offset <= s.endOffset);
}
