// The compiler's entry for work on the text alone (reading, formatting, rewriting a Spoolfile), without
// the IR compiler behind compiler/index.ts: what `spool config fmt` loads, once per save or commit in
// editors and pre-commit, so it starts fast (docs/decisions.md D140). Everything here is also
// exported by compiler/index.ts.
export { configFingerprint, readSpoolfile, type SpoolfileRead } from "./read.js";
export { formatText, type FormatResult } from "./format.js";
export { writeFileAtomically } from "./rewrite.js";
export { renderDiagnostic, type Diagnostic } from "../grammar/index.js";
