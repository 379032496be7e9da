import { loadSpoolfile } from "../../compiler/index.js";
import { renderDiagnostic, type Diagnostic } from "../../grammar/index.js";
import type { CommandOutput } from "../io.js";

export interface ValidateFlags {
  readonly config: string;
  readonly format?: string;
  readonly strictSecrets?: boolean;
}

// DECISIONS.md: exit 0 valid, 1 invalid, 2 usage error; JSON is {ok, errors:[{file,line,col,message}], warnings:[…]}.
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
    const shape = (d: Diagnostic) => ({ file: d.span.file, line: d.span.line, col: d.span.col, message: d.message });
    out.stdout(JSON.stringify({ ok, errors: errors.map(shape), warnings: warnings.map(shape) }));
  } else {
    for (const d of result.diagnostics) out.stderr(renderDiagnostic(d));
    if (ok) out.stdout(`${flags.config}: valid${warnings.length ? ` (${warnings.length} warning${warnings.length === 1 ? "" : "s"})` : ""}`);
    else out.stderr(`${flags.config}: ${errors.length} error${errors.length === 1 ? "" : "s"}`);
  }
  return ok ? 0 : 1;
}
