// Config errors without the values the file gives, for output that ends up in logs: `config diff
// --semantic` (README: it never prints a secret value) and `spool run`'s startup and reload errors.
// A message quotes what it found (`got "raw:…"`, a duplicated target's URL, a bad header value),
// and in an invalid file a credential is often exactly the misplaced value. `config validate` and
// `config fmt` print the messages whole: they are what an operator runs to see the details.
// Anything else the file gives is hidden wherever it appears in a message: URLs, `raw:` sources,
// text with spaces, capitals or symbols.
import { parseSpoolfile, type Diagnostic, type Directive, type Item } from "../grammar/index.js";
import { expansionMasker } from "./diff.js";

export const HIDDEN_VALUE = "(redacted)";

/** Said once after masked errors, so the operator knows where the details are. */
export const MASKED_DIAGNOSTICS_HINT = "values from the file are not shown here; `spool config validate` shows them";

/**
 * Words the language itself is made of (enum values, directive names), numbers, durations and
 * sizes: shown, except among the arguments of the directives the diagnostic is about, where a
 * misplaced credential of that shape (a lowercase password, a numeric PIN) would be the value the
 * message quotes; the plain first of several arguments is a keyword and is always shown.
 */
const PLAIN_WORD = /^(?:[a-z][a-z0-9_]*(?:[.-][a-z0-9_]+)*|[0-9]+(?:\.[0-9]+)?[a-z]*)$/;

/**
 * Paths (routes, pull paths, `/etc/spool/tls/cert.pem`, `tls/cert.pem`) and matcher names: always
 * shown, since an error about a file must say which. Nothing with a scheme, query or fragment (a URL
 * is hidden whole: its password and query carry credentials); a relative path needs a file
 * extension, which a token never ends in.
 */
const PATH = /^(?:@[A-Za-z0-9_-]+|\/[^\s:?#"]*|[A-Za-z0-9_.-]*\/[A-Za-z0-9_./-]*\.[a-z]{2,5})$/;

interface FileValue {
  readonly text: string;
  /** Hidden only in a diagnostic that points inside this directive (see PLAIN_WORD). */
  readonly onlyWithin: Directive | null;
}

/**
 * The diagnostics of `text` (compiled from `file`) with every value of the file hidden from their
 * messages as described above; placeholder values (`{env.X}` expanded) print as their placeholder,
 * and URL query values and passwords are hidden too.
 */
export function maskDiagnostics(
  diagnostics: readonly Diagnostic[],
  text: string,
  file: string,
  expansions?: ReadonlyMap<string, string>,
): Diagnostic[] {
  const values = fileValues(text, file);
  const placeholders = expansionMasker(expansions);
  return diagnostics.map((d) => {
    const hidden = values
      .filter((v) => v.onlyWithin === null || contains(v.onlyWithin, d.span.offset))
      .flatMap((v) => spellings(v.text))
      .sort((a, b) => b.length - a.length);
    let message = d.message;
    for (const value of hidden) message = replaceWhole(message, value);
    return { ...d, message: placeholders(message) };
  });
}

function fileValues(text: string, file: string): FileValue[] {
  const values: FileValue[] = [];
  const visit = (items: readonly Item[]) => {
    for (const item of items) {
      if (item.kind !== "directive") continue;
      const name = item.name;
      if (name && !PLAIN_WORD.test(name.value) && !PATH.test(name.value)) values.push({ text: name.value, onlyWithin: null }, { text: name.raw, onlyWithin: null });
      item.args.forEach((arg, index) => {
        if (PATH.test(arg.value)) return;
        const plain = PLAIN_WORD.test(arg.value);
        // The plain first of several arguments is the directive's own keyword (`auth basic …`,
        // `header Name …`, `match query …`), which messages name: shown.
        if (plain && index === 0 && item.args.length > 1) return;
        const onlyWithin = plain ? item : null;
        values.push({ text: arg.value, onlyWithin }, { text: arg.raw, onlyWithin });
      });
      if (item.block) visit(item.block.items);
    }
  };
  visit(parseSpoolfile(text, file).tree.items);
  return values.filter((v) => v.text !== "");
}

function contains(directive: Directive, offset: number): boolean {
  return directive.span.offset <= offset && offset < Math.max(directive.span.endOffset, directive.span.offset + 1);
}

/** A value as it may read in a message: as written, and inside JSON text (messages quote with JSON.stringify). */
function spellings(value: string): string[] {
  const escaped = JSON.stringify(value).slice(1, -1);
  return escaped === value ? [value] : [value, escaped];
}

const WORD_CHAR = /[A-Za-z0-9_]/;

/** Replaces each occurrence of `value` that is not part of a longer word ("on" in "one" stays). */
function replaceWhole(message: string, value: string): string {
  let out = "";
  let from = 0;
  for (let at = message.indexOf(value); at >= 0; at = message.indexOf(value, at + 1)) {
    if (at < from) continue;
    const before = at > 0 ? message[at - 1] : "";
    const after = message[at + value.length] ?? "";
    const startsWord = WORD_CHAR.test(value[0]) && WORD_CHAR.test(before);
    const endsWord = WORD_CHAR.test(value[value.length - 1]) && WORD_CHAR.test(after);
    if (startsWord || endsWord) continue;
    out += message.slice(from, at) + HIDDEN_VALUE;
    from = at + value.length;
  }
  return out + message.slice(from);
}
