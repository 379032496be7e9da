// Config errors without anything the file gives, for output that ends up in logs: `config diff
// --semantic` (README: it never prints a secret value) and `spool run`'s startup and reload errors.
// A message quotes what it found (`got "raw:…"`, a duplicated target's URL, a bad header value, the
// name of an unknown directive), and in an invalid file a credential is often exactly the misplaced
// value: a password wrapped onto the next line becomes a directive name, a secret source loses its
// prefix, a placeholder's value arrives trimmed or cut short. Masking values inside the message text
// missed such cases (a review found six), so these outputs keep only what cannot hold one: the
// position, and the message's subject when it is made of directive names the compiler accepted
// (`retry:`, `deliver header:`). `config validate` and `config fmt` print messages whole: they are
// what an operator runs to see the details.
import { parseSpoolfile, type Diagnostic, type Item } from "../grammar/index.js";

/** Said once after withheld errors, so the operator knows where the details are. */
export const MASKED_DIAGNOSTICS_HINT = "details are withheld here, since they may quote a value of the file; `spool config validate` shows them";

const WITHHELD = "invalid (details withheld)";

/** The diagnostics of `text` (compiled from `file`), each reduced to its position and subject. */
export function maskDiagnostics(diagnostics: readonly Diagnostic[], text: string, file: string): Diagnostic[] {
  // `spool run` passes every load through here: a clean file is not parsed a second time.
  if (diagnostics.length === 0) return [];
  const known = acceptedNames(text, file, diagnostics);
  return diagnostics.map((d) => {
    const subject = subjectOf(d.message, known);
    return { ...d, message: subject === null ? WITHHELD : `${subject}: ${WITHHELD}` };
  });
}

/** `deliver header` of "deliver header: header value … is not allowed", when every word is an accepted name. */
function subjectOf(message: string, known: ReadonlySet<string>): string | null {
  const colon = message.indexOf(": ");
  if (colon <= 0) return null;
  const subject = message.slice(0, colon);
  return subject.split(" ").every((word) => known.has(word)) ? subject : null;
}

/**
 * The directive names of the file the compiler accepted: every name except those an error calls
 * unknown (a misplaced value that landed where a name goes) and those inside `vars`, and only words
 * of the language's shape.
 */
function acceptedNames(text: string, file: string, diagnostics: readonly Diagnostic[]): Set<string> {
  const unknownAt = new Set(diagnostics.filter((d) => d.message.startsWith("unknown ")).map((d) => d.span.offset));
  const names = new Set<string>();
  const visit = (items: readonly Item[]) => {
    for (const item of items) {
      if (item.kind !== "directive") continue;
      if (item.name && !unknownAt.has(item.name.span.offset) && /^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*$/.test(item.name.value)) names.add(item.name.value);
      // A vars block's names are the operator's own, and a value misplaced there reads as one.
      if (item.block && item.name?.value !== "vars") visit(item.block.items);
    }
  };
  visit(parseSpoolfile(text, file).tree.items);
  return names;
}
