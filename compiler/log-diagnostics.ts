// Config diagnostics as they may reach logs: `spool run`'s startup errors, the reload log line and
// `config diff --semantic` (README: it never prints a secret value). A message quotes what it found,
// and in an invalid file a credential is often exactly the misplaced value (a password wrapped onto
// its own line becomes a directive name, a secret source loses its prefix), so these outputs are
// built from a diagnostic's structured parts instead, never from its message: the code's sentence,
// the subject (directive names and route paths), what was expected (the compiler's own words, an
// environment variable's or a file's name at most) and a did-you-mean (a known name). `found`, the
// value of the file, is never shown. `config validate` and `config fmt` print messages whole: they
// are what an operator runs to see the details.
import { DIAGNOSTIC_SENTENCES, type Diagnostic } from "../grammar/index.js";

/** Said once after log-safe errors, so the operator knows where the values are. */
export const LOG_DIAGNOSTICS_HINT = "values of the file are not shown here; `spool config validate` shows them";

/** `<sentence>: <subject>: expected <expected> (did you mean "<name>"?)`, with no value of the file. */
export function logSafeMessage(d: Diagnostic): string {
  const subject = d.subject === "" ? "" : `: ${d.subject}`;
  const suggestion = d.suggestion === undefined ? "" : ` (did you mean "${d.suggestion}"?)`;
  const refused = d.refusedByRun ? "; spool run refuses to start or reload with it" : "";
  return `${DIAGNOSTIC_SENTENCES[d.code]}${subject}: expected ${d.expected}${suggestion}${refused}`;
}

/** The diagnostics with their messages made log-safe and their found values dropped. */
export function logSafeDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return diagnostics.map(({ found: _found, ...d }) => ({ ...d, message: logSafeMessage(d) }));
}
