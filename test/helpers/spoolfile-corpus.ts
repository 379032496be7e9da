// The golden Spoolfile corpus under fixtures/config/: formatting cases (input + canonical output)
// and syntax-error cases (input + rendered diagnostics). Shared by the golden and property tests.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeSpoolfileBytes, parseSpoolfile, renderDiagnostic, sortDiagnostics, type Diagnostic, type ParseResult } from "../../grammar/index.js";
import { repoRoot } from "./repo.js";

export { repoRoot };

export const fmtDir = "fixtures/config/fmt";
export const syntaxErrorDir = "fixtures/config/syntax-errors";

export interface CorpusCase {
  readonly name: string;
  /** Repo-relative path of the input: the file name diagnostics carry. */
  readonly inputFile: string;
  /** Repo-relative path of the expected output (`.expected.spool` or `.expected.txt`). */
  readonly expectedFile: string;
}

function listCases(dir: string, expectedSuffix: string): CorpusCase[] {
  return readdirSync(join(repoRoot, dir))
    .filter((f) => f.endsWith(".spool") && !f.endsWith(".expected.spool"))
    .sort()
    .map((f) => {
      const name = f.slice(0, -".spool".length);
      return { name, inputFile: `${dir}/${f}`, expectedFile: `${dir}/${name}${expectedSuffix}` };
    });
}

export function fmtCases(): CorpusCase[] {
  return listCases(fmtDir, ".expected.spool");
}

export function syntaxErrorCases(): CorpusCase[] {
  return listCases(syntaxErrorDir, ".expected.txt");
}

export function readRepoBytes(file: string): Uint8Array {
  return readFileSync(join(repoRoot, file));
}

export function readRepoText(file: string): string {
  return readFileSync(join(repoRoot, file), "utf8");
}

/** Reads a Spoolfile the way the CLI does: strict UTF-8 first, then the parser. */
export function parseRepoFile(file: string): { text: string | null; parsed: ParseResult | null; diagnostics: readonly Diagnostic[] } {
  const decoded = decodeSpoolfileBytes(readRepoBytes(file), file);
  if ("diagnostic" in decoded) return { text: null, parsed: null, diagnostics: [decoded.diagnostic] };
  const parsed = parseSpoolfile(decoded.text, file);
  return { text: decoded.text, parsed, diagnostics: parsed.diagnostics };
}

/** One `file:line:col: message` per line, in file order, with a final newline. */
export function renderDiagnostics(diagnostics: readonly Diagnostic[]): string {
  return sortDiagnostics(diagnostics).map((d) => renderDiagnostic(d) + "\n").join("");
}

/** `SPOOL_UPDATE_GOLDEN=1` rewrites expected files; the result must be reviewed before committing. */
export const updateGolden = process.env.SPOOL_UPDATE_GOLDEN === "1";
