import { readFile } from "node:fs/promises";
import { decodeSpoolfileBytes, renderDiagnostic } from "../grammar/index.js";

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

export async function readConfigText(path: string): Promise<{ ok: true; text: string } | { ok: false; message: string }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, message: `${path}: cannot read config: ${code === "ENOENT" ? "file not found" : (error as Error).message}` };
  }
  const decoded = decodeSpoolfileBytes(bytes, path);
  return "text" in decoded ? { ok: true, text: decoded.text } : { ok: false, message: renderDiagnostic(decoded.diagnostic) };
}
