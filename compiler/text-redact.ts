// Spoolfile text as the MCP server may show it (docs/mcp.md "Redaction"): the same text with every
// value that can be a credential replaced by `(redacted)`. Which arguments those are is decided on
// the parsed tree, not by pattern over the text: `raw:` secret values, `auth basic` passwords,
// `header` values (match, deliver, tracing), exec `env` values and arguments, `vars` values, and in every argument
// URL passwords, URL query values and `{$NAME:default}` defaults.
import { parseSpoolfile, type Arg, type Diagnostic, type Directive, type Item } from "../grammar/index.js";
import { redactUrl, URL_REDACTED } from "./url-redact.js";

interface Replacement {
  start: number;
  end: number;
  text: string;
}

/** Whether argument `index` of `directive` (inside `ancestors`, outermost first) is hidden whole; when not, only its URL parts and `raw:` value are. */
function hiddenWhole(directive: Directive, index: number, ancestors: readonly string[]): boolean {
  const name = directive.name?.value ?? "";
  const parent = ancestors[ancestors.length - 1] ?? "";
  if (ancestors.includes("vars")) return true;
  if (parent === "env") return true;
  if (name === "env" && index >= 1) return true;
  if (name === "header" && index >= 1) return true;
  // An exec program's arguments may carry credentials of their own (config diff --semantic hides them too).
  if (name === "deliver" && directive.args[0]?.value === "exec" && index >= 2) return true;
  if (name === "auth" && directive.args[0]?.value === "basic" && index >= 2) return true;
  if (name === "basic" && parent === "auth" && index >= 1) return true;
  return false;
}

/** How one argument reads once redacted (its raw text, quoting kept). */
function redactedArg(arg: Arg, whole: boolean): string {
  const quote = arg.kind === "string" ? '"' : "";
  if (whole) return `${quote}${URL_REDACTED}${quote}`;
  if (/^raw:/i.test(arg.value)) return `${quote}raw:${URL_REDACTED}${quote}`;
  return redactUrl(arg.raw);
}

function visit(items: readonly Item[], ancestors: string[], found: (directive: Directive, ancestors: readonly string[]) => void): void {
  for (const item of items) {
    if (item.kind !== "directive") continue;
    found(item, ancestors);
    if (item.block) visit(item.block.items, [...ancestors, item.name?.value ?? ""], found);
  }
}

/** `text` with its credential values replaced; a text that does not parse is redacted as far as it parses. */
export function redactSpoolfileText(text: string, file = "Spoolfile"): string {
  const { tree } = parseSpoolfile(text, file);
  const replacements: Replacement[] = [];
  visit(tree.items, [], (directive, ancestors) => {
    directive.args.forEach((arg, index) => {
      const shown = redactedArg(arg, hiddenWhole(directive, index, ancestors));
      if (shown !== arg.raw) replacements.push({ start: arg.span.offset, end: arg.span.endOffset, text: shown });
    });
    // A directive name can carry a value too: a `vars` entry's name is fine, but a URL-like name is not.
    if (directive.name && directive.name.raw !== redactUrl(directive.name.raw)) {
      replacements.push({ start: directive.name.span.offset, end: directive.name.span.endOffset, text: redactUrl(directive.name.raw) });
    }
  });
  replacements.sort((a, b) => b.start - a.start);
  let out = text;
  for (const r of replacements) out = out.slice(0, r.start) + r.text + out.slice(r.end);
  return out;
}

export interface OutlineEntry {
  name: string;
  args: string[];
  line: number;
  block?: OutlineEntry[];
}

/** The directive tree of `text` (names, decoded arguments as redacted, lines) and its syntax diagnostics. */
export function spoolfileOutline(text: string, file = "Spoolfile"): { entries: OutlineEntry[]; diagnostics: readonly Diagnostic[] } {
  const { tree, diagnostics } = parseSpoolfile(text, file);
  const build = (items: readonly Item[], ancestors: string[]): OutlineEntry[] =>
    items.flatMap((item) => {
      if (item.kind !== "directive") return [];
      const entry: OutlineEntry = {
        name: redactUrl(item.name?.value ?? ""),
        args: item.args.map((arg, index) => {
          const whole = hiddenWhole(item, index, ancestors);
          if (whole) return URL_REDACTED;
          if (/^raw:/i.test(arg.value)) return `raw:${URL_REDACTED}`;
          return redactUrl(arg.value);
        }),
        line: item.span.line,
      };
      if (item.block) entry.block = build(item.block.items, [...ancestors, item.name?.value ?? ""]);
      return [entry];
    });
  return { entries: build(tree.items, []), diagnostics };
}
