import { formatSpan, type Span } from "./span.js";

export type Severity = "error" | "warning";

/** One problem found in a Spoolfile, anchored at the text that caused it. */
export interface Diagnostic {
  readonly severity: Severity;
  readonly message: string;
  readonly span: Span;
}

export function errorAt(span: Span, message: string): Diagnostic {
  return { severity: "error", message, span };
}

export function warningAt(span: Span, message: string): Diagnostic {
  return { severity: "warning", message, span };
}

/** `file:line:col: message` (warnings say so). */
export function renderDiagnostic(d: Diagnostic): string {
  return `${formatSpan(d.span)}: ${d.severity === "warning" ? "warning: " : ""}${d.message}`;
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === "error");
}

/** Stable order for reports: by file position, errors before warnings at the same place. */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return [...diagnostics].sort(
    (a, b) => a.span.offset - b.span.offset || (a.severity === b.severity ? 0 : a.severity === "error" ? -1 : 1),
  );
}
