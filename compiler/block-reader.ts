import { directivesOf, formatSpan, type Arg, type Directive } from "../grammar/index.js";
import { nameOf, spanOf, type CompileContext } from "./context.js";
import { closestName } from "./names.js";
import { decodeBool, decodeDuration, decodeInt, decodeSize, expectArgs, expectNoBlock } from "./values.js";

export interface DirectiveRule {
  /** Repeatable directives (`auth token`, `allow`, `header`, …) may appear more than once. */
  readonly repeatable?: boolean;
  readonly handle: (d: Directive) => void;
}

/**
 * Dispatches the directives of `owner`'s block to `rules`, reporting unknown directives (with the
 * accepted names) and duplicates (with the first occurrence's position).
 */
export function readBlock(cx: CompileContext, owner: Directive, where: string, rules: Readonly<Record<string, DirectiveRule>>): void {
  if (!owner.block) {
    cx.error(spanOf(owner), "missing_block", "a block { … }", `${where} needs a block: ${where} { … }`);
    return;
  }
  readDirectives(cx, directivesOf(owner.block.items), where, rules);
}

/** readBlock for a block that takes no arguments of its own (`ingress { … }`, not `ingress extra { … }`). */
export function readBareBlock(cx: CompileContext, owner: Directive, where: string, rules: Readonly<Record<string, DirectiveRule>>): void {
  // Without a block, the arguments are most likely its statements with the "{" left out: one error says so.
  if (owner.args.length > 0 && owner.block) cx.error(owner.args[0].span, "wrong_arguments", "no arguments before the block", `${where} takes no arguments before its block: ${where} { … }`, { found: owner.args[0].value });
  readBlock(cx, owner, where, rules);
}

export function readDirectives(cx: CompileContext, directives: readonly Directive[], where: string, rules: Readonly<Record<string, DirectiveRule>>): void {
  const seen = new Map<string, Directive>();
  for (const d of directives) {
    if (!d.name) continue; // a nameless block was already reported by the parser
    const name = nameOf(d);
    const rule = Object.hasOwn(rules, name) ? rules[name] : undefined;
    if (!rule) {
      const suggestion = closestName(name, Object.keys(rules));
      const expected = `one of: ${Object.keys(rules).join(", ")}`;
      if (suggestion) cx.failedAs(d, suggestion);
      cx.error(spanOf(d), "unknown_directive", expected, `unknown directive "${name}" in ${where}${suggestion ? ` (did you mean "${suggestion}"?)` : ""}; expected ${expected}`, { found: name, suggestion });
      continue;
    }
    const first = seen.get(name);
    if (first && !rule.repeatable) {
      cx.within(name, () => cx.error(spanOf(d), "duplicate_directive", `${name} at most once in this block (first at ${formatSpan(spanOf(first))})`, `duplicate directive "${name}" in ${where} (first at ${formatSpan(spanOf(first))})`));
      continue;
    }
    seen.set(name, d);
    cx.within(name, () => cx.compiling(d, () => rule.handle(d)));
  }
}

/** The single argument of a `name value` directive, or undefined after reporting. */
export function singleArg(cx: CompileContext, d: Directive, usage: string): Arg | undefined {
  if (!expectArgs(cx, d, 1, 1, usage) || !expectNoBlock(cx, d)) return undefined;
  return d.args[0];
}

/** Rule builders for the common scalar shapes; `set` receives the decoded value. */
export const scalar = {
  bool: (cx: CompileContext, what: string, set: (v: boolean) => void): DirectiveRule => ({
    handle: (d) => {
      const arg = singleArg(cx, d, `${what} on|off`);
      const v = arg && decodeBool(cx, arg, what);
      if (v !== undefined) set(v);
    },
  }),
  duration: (cx: CompileContext, what: string, set: (v: number | null) => void, opts: { allowOff?: boolean; positive?: boolean } = {}): DirectiveRule => ({
    handle: (d) => {
      const arg = singleArg(cx, d, `${what} <duration>`);
      const v = arg && decodeDuration(cx, arg, what, opts);
      if (v !== undefined) set(v);
    },
  }),
  size: (cx: CompileContext, what: string, set: (v: number) => void): DirectiveRule => ({
    handle: (d) => {
      const arg = singleArg(cx, d, `${what} <size>`);
      const v = arg && decodeSize(cx, arg, what);
      if (v !== undefined) set(v);
    },
  }),
  int: (cx: CompileContext, what: string, min: number, max: number, set: (v: number) => void): DirectiveRule => ({
    handle: (d) => {
      const arg = singleArg(cx, d, `${what} <number>`);
      const v = arg && decodeInt(cx, arg, what, min, max);
      if (v !== undefined) set(v);
    },
  }),
  text: (cx: CompileContext, what: string, set: (v: string, arg: Arg) => void): DirectiveRule => ({
    handle: (d) => {
      const arg = singleArg(cx, d, `${what} <value>`);
      if (arg) set(cx.text(arg), arg);
    },
  }),
};

export { closestName } from "./names.js";
