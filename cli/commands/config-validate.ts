import { type Diagnostic, loadSpoolfile, renderDiagnostic } from "../../compiler/index.js";
import type { CommandOutput } from "../io.js";

export interface ValidateFlags {
  readonly config: string;
  readonly format?: string;
  readonly strictSecrets?: boolean;
}

/**
 * `config validate FILE…` (what pre-commit runs, docs/editors.md): each file validated as with
 * `--config FILE`, in turn; exit 1 when any is invalid. JSON output is one document, so it takes one file.
 */
export async function runConfigValidateFiles(files: readonly string[], flags: ValidateFlags, out: CommandOutput): Promise<number> {
  if (files.length === 0) return runConfigValidate(flags, out);
  if (files.length > 1 && flags.format === "json") {
    out.stderr("spool: config validate: --format json validates one file at a time");
    return 2;
  }
  let worst = 0;
  for (const file of files) worst = Math.max(worst, await runConfigValidate({ ...flags, config: file }, out));
  return worst;
}

// Exit 0 valid, 1 invalid, 2 usage error. JSON is {ok, errors:[…], warnings:[…]}, each entry
// {file, line, col, message, code, subject, expected} with found and suggestion when known.
export async function runConfigValidate(flags: ValidateFlags, out: CommandOutput): Promise<number> {
  const format = flags.format ?? "text";
  if (format !== "text" && format !== "json") {
    out.stderr(`--format: expected text or json, got ${JSON.stringify(format)}`);
    return 2;
  }
  const result = loadSpoolfile(flags.config, { strictSecrets: flags.strictSecrets ?? false });
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  const warnings = result.diagnostics.filter((d) => d.severity === "warning");
  const ok = errors.length === 0;
  if (format === "json") {
    out.stdout(JSON.stringify({ ok, errors: errors.map(jsonEntry), warnings: warnings.map(jsonEntry) }));
  } else {
    for (const d of result.diagnostics) out.stderr(renderDiagnostic(d));
    if (ok) out.stdout(`${flags.config}: ${validSummary(warnings)}`);
    else out.stderr(`${flags.config}: ${errors.length} error${errors.length === 1 ? "" : "s"}`);
  }
  return ok ? 0 : 1;
}

function jsonEntry(d: Diagnostic): Record<string, string | number> {
  const entry: Record<string, string | number> = { file: d.span.file, line: d.span.line, col: d.span.col, message: d.message, code: d.code, subject: d.subject, expected: d.expected };
  if (d.found !== undefined) entry.found = d.found;
  if (d.suggestion !== undefined) entry.suggestion = d.suggestion;
  return entry;
}

/** `valid`, `valid (2 warnings)`; warnings `spool run` refuses (an unreadable secret) are counted apart. */
function validSummary(warnings: readonly Diagnostic[]): string {
  if (warnings.length === 0) return "valid";
  const refused = warnings.filter((d) => d.refusedByRun).length;
  const count = `${warnings.length} warning${warnings.length === 1 ? "" : "s"}`;
  if (refused === 0) return `valid (${count})`;
  return `valid (${count}), but spool run refuses it as it stands: ${refused === warnings.length && refused === 1 ? "the warning names" : `${refused} of the warnings name`} a file or secret it cannot use`;
}
