import { formatSpan, type Span } from "./span.js";

export type Severity = "error" | "warning";

/**
 * Every diagnostic's stable code, with the sentence a log line says for it. Codes are part of the
 * `config validate --format json` output: add new ones, never rename.
 */
export const DIAGNOSTIC_SENTENCES = {
  syntax_error: "syntax error",
  unexpected_character: "unexpected character",
  unterminated_string: "unterminated string",
  unclosed_block: "unclosed block",
  nesting_too_deep: "blocks nested too deep",
  invalid_utf8: "invalid UTF-8",
  config_unreadable: "cannot read the config file",
  empty_config: "the config is empty",
  unknown_directive: "unknown directive",
  duplicate_directive: "duplicate directive",
  wrong_arguments: "wrong number of arguments",
  unexpected_block: "unexpected block",
  missing_block: "missing block",
  missing_directive: "a required setting is missing",
  expected_duration: "invalid duration",
  expected_size: "invalid size",
  expected_bool: "invalid on/off value",
  expected_number: "invalid number",
  expected_enum: "invalid choice",
  expected_url: "invalid URL",
  expected_path: "invalid path",
  expected_listen: "invalid listen address",
  expected_timestamp: "invalid timestamp",
  expected_secret_source: "invalid secret source",
  expected_name: "invalid name",
  invalid_value: "invalid value",
  unknown_reference: "unknown reference",
  env_unset: "environment variable not set",
  file_unreadable: "file cannot be read",
  secret_empty: "empty secret",
  not_allowed_here: "not allowed here",
  conflict: "conflicting settings",
  route_conflict: "routes conflict",
  listener_conflict: "listeners conflict",
  missing_token: "no token configured",
  egress_denied_target: "the egress policy refuses this deliver target",
} as const;

export type DiagnosticCode = keyof typeof DIAGNOSTIC_SENTENCES;

/** What a diagnostic is about, apart from its sentence: the structured part. */
export interface Problem {
  readonly code: DiagnosticCode;
  /**
   * The directive path (`route /github › deliver › timeout`), made of the compiler's own names plus
   * route and pull paths only; "" for the file as a whole.
   */
  readonly subject: string;
  /** What was expected, in the compiler's words (may name an environment variable or a file path). */
  readonly expected: string;
  /** The value the file gave: the only field that may hold text of the file. */
  readonly found?: string;
  /** A known name within two edits of a misspelt one. */
  readonly suggestion?: string;
  /** `spool run` refuses this, though `config validate` reports it as a warning (an unreadable secret). */
  readonly refusedByRun?: boolean;
}

/** One problem found in a Spoolfile, anchored at the text that caused it. */
export interface Diagnostic extends Problem {
  readonly severity: Severity;
  /** The full human sentence (may quote values of the file). */
  readonly message: string;
  readonly span: Span;
}

const SYNTAX: Problem = { code: "syntax_error", subject: "", expected: "a directive: name, arguments, and an optional { block }" };

export function errorAt(span: Span, message: string, problem: Problem = SYNTAX): Diagnostic {
  return { ...problem, severity: "error", message, span };
}

export function warningAt(span: Span, message: string, problem: Problem = SYNTAX): Diagnostic {
  return { ...problem, severity: "warning", message, span };
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
