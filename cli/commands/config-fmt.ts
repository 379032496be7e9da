import { readFile } from "node:fs/promises";
import { formatText, writeFileAtomically } from "../../compiler/index.js";
import { renderDiagnostic } from "../../grammar/index.js";
import { readConfigText, type CommandOutput } from "../io.js";

export interface FmtFlags {
  readonly config: string;
  readonly write?: boolean;
  readonly check?: boolean;
}

// DECISIONS.md "config fmt": stdout by default; --write rewrites atomically; --check prints nothing
// and exits 1 when unformatted; a parse error exits 2 with --check, 1 otherwise. The two flags ask
// opposite things (report only, or rewrite), so together they are a usage error (exit 2), not a
// silent choice of one.
export async function runConfigFmt(flags: FmtFlags, out: CommandOutput): Promise<number> {
  if (flags.check && flags.write) {
    out.stderr("spool: config fmt: --check and --write cannot be used together (--check only reports, --write rewrites)");
    return 2;
  }
  const parseFailureCode = flags.check ? 2 : 1;
  const read = await readConfigText(flags.config);
  if (!read.ok) {
    out.stderr(read.message);
    return parseFailureCode;
  }
  const result = formatText(read.text, flags.config);
  if (!result.ok) {
    for (const d of result.diagnostics) out.stderr(renderDiagnostic(d));
    return parseFailureCode;
  }
  // Both compare with the file as stored (a byte-order mark included), so --check exits 0 exactly
  // when --write would leave the file alone.
  const stored = flags.check || flags.write ? await readFile(flags.config, "utf8") : read.text;
  if (flags.check) return result.text === stored ? 0 : 1;
  if (flags.write) {
    if (result.text !== stored) await writeFileAtomically(flags.config, result.text);
    return 0;
  }
  out.stdoutRaw(result.text);
  return 0;
}
