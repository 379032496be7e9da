import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { formatText, renderDiagnostic, writeFileAtomically } from "../../compiler/text.js";
import { readConfigText, type CommandOutput } from "../io.js";

export interface FmtFlags {
  /** `--config F`; with no file given at all, ./Spoolfile. */
  readonly config?: string;
  readonly write?: boolean;
  readonly check?: boolean;
}

const DEFAULT_FMT_FILE = "./Spoolfile";

/** One file's outcome: formatted already, not formatted (and rewritten with --write), or unreadable. */
type FileOutcome = "formatted" | "unformatted" | "error";

// docs/cli.md, docs/decisions.md D4: stdout by default; --write rewrites atomically; --check prints nothing on
// stdout and exits 1 when unformatted; a parse error exits 2 with --check, 1 otherwise. --check names
// each unformatted file on stderr, as `prettier --check` and `gofmt -l` do, so with several files it
// is clear which. The two flags ask opposite things (report only, or rewrite), so together they are
// a usage error (exit 2), not a silent choice of one; so is printing several files, which would run
// them together on stdout.
export async function runConfigFmt(files: readonly string[], flags: FmtFlags, out: CommandOutput): Promise<number> {
  if (flags.check && flags.write) {
    out.stderr("spool: config fmt: --check and --write cannot be used together (--check only reports, --write rewrites)");
    return 2;
  }
  // Duplicates count once by the file they name (`bad.spool` and `./bad.spool` are one), as docs/cli.md says.
  const byResolved = new Map<string, string>();
  for (const path of [...(flags.config === undefined ? [] : [flags.config]), ...files]) if (!byResolved.has(resolve(path))) byResolved.set(resolve(path), path);
  const paths = [...byResolved.values()];
  if (paths.length === 0) paths.push(DEFAULT_FMT_FILE);
  if (paths.length > 1 && !flags.check && !flags.write) {
    out.stderr("spool: config fmt: several files are printed only one at a time: give one file, or use --check or --write");
    return 2;
  }
  const outcomes: FileOutcome[] = [];
  for (const path of paths) outcomes.push(await formatFile(path, flags, out));
  if (outcomes.includes("error")) return flags.check ? 2 : 1;
  return flags.check && outcomes.includes("unformatted") ? 1 : 0;
}

/** Formats one file as the flags ask: prints it, rewrites it, or names it on stderr when it is not formatted. */
async function formatFile(path: string, flags: FmtFlags, out: CommandOutput): Promise<FileOutcome> {
  const read = await readConfigText(path);
  if (!read.ok) {
    out.stderr(read.message);
    return "error";
  }
  const result = formatText(read.text, path);
  if (!result.ok) {
    for (const d of result.diagnostics) out.stderr(renderDiagnostic(d));
    return "error";
  }
  if (!flags.check && !flags.write) {
    out.stdoutRaw(result.text);
    return "formatted";
  }
  // Both compare with the file as stored (a byte-order mark included), so --check exits 0 exactly
  // when --write would leave the file alone.
  const stored = await readFile(path, "utf8");
  if (result.text === stored) return "formatted";
  if (flags.check) out.stderr(`${path}: not formatted (run spool config fmt --write ${path})`);
  else await writeFileAtomically(path, result.text);
  return "unformatted";
}
