import { readSpoolfile, renderDiagnostic } from "../compiler/text.js";

/** Where a command writes; the CLI binds it to the process, tests may capture it. */
export interface CommandOutput {
  stdout(line: string): void;
  stdoutRaw(text: string): void;
  stderr(line: string): void;
}

export const processOutput: CommandOutput = {
  stdout: (line) => process.stdout.write(line + "\n"),
  stdoutRaw: (text) => process.stdout.write(text),
  stderr: (line) => process.stderr.write(line + "\n"),
};

/** The config file's text (compiler/read.ts reads it), or the one-line message of why not. */
export async function readConfigText(path: string): Promise<{ ok: true; text: string } | { ok: false; message: string }> {
  const read = readSpoolfile(path);
  if (read.ok) return { ok: true, text: read.text };
  return "reason" in read ? { ok: false, message: `${path}: cannot read config: ${read.reason}` } : { ok: false, message: renderDiagnostic(read.diagnostic) };
}
