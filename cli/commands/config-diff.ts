import { compileSpoolfile, formatText, LOG_DIAGNOSTICS_HINT, logSafeDiagnostics, renderChanges, renderDiagnostic, semanticChanges, unifiedDiff } from "../../compiler/index.js";
import { readConfigText, type CommandOutput } from "../io.js";

export interface DiffFlags {
  readonly semantic?: boolean;
}

// Exit 0 same, 1 different, 2 error. Both files are formatted first, so layout-only differences
// vanish; --semantic compares the compiled IRs instead.
export async function runConfigDiff(oldPath: string | undefined, newPath: string | undefined, flags: DiffFlags, out: CommandOutput): Promise<number> {
  if (!oldPath || !newPath) {
    out.stderr("usage: spool config diff OLD NEW [--semantic]");
    return 2;
  }
  const texts: string[] = [];
  for (const path of [oldPath, newPath]) {
    const read = await readConfigText(path);
    if (!read.ok) {
      out.stderr(read.message);
      return 2;
    }
    texts.push(read.text);
  }
  if (flags.semantic) {
    const [before, after] = [compileSpoolfile(texts[0], oldPath), compileSpoolfile(texts[1], newPath)];
    if (!before.config || !after.config) {
      // Errors too never print a value of the files: a misplaced credential is what they would quote.
      const errors = logSafeDiagnostics([...before.diagnostics, ...after.diagnostics]).filter((d) => d.severity === "error");
      for (const d of errors) out.stderr(renderDiagnostic(d));
      out.stderr(`(${LOG_DIAGNOSTICS_HINT})`);
      return 2;
    }
    const changes = semanticChanges({ config: before.config, expansions: before.expansions }, { config: after.config, expansions: after.expansions });
    if (changes.length > 0) out.stdout(renderChanges(changes));
    return changes.length === 0 ? 0 : 1;
  }
  const formatted: string[] = [];
  for (const [i, path] of [oldPath, newPath].entries()) {
    const result = formatText(texts[i], path);
    if (!result.ok) {
      for (const d of result.diagnostics) out.stderr(renderDiagnostic(d));
      return 2;
    }
    formatted.push(result.text);
  }
  const patch = unifiedDiff(formatted[0], formatted[1], oldPath, newPath);
  if (patch) out.stdoutRaw(patch);
  return patch ? 1 : 0;
}
