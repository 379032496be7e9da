// The one place a Spoolfile is read from disk (the CLI's config commands and `spool run` alike):
// its bytes, strictly decoded as UTF-8, with the fingerprint of those bytes.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { decodeSpoolfileBytes, type Diagnostic } from "../grammar/index.js";

export type SpoolfileRead =
  | { ok: true; text: string; fingerprint: string }
  /** The file could not be read; `reason` says why ("file not found", or the system's message). */
  | { ok: false; reason: string }
  /** The file is not UTF-8 text. */
  | { ok: false; diagnostic: Diagnostic };

export function readSpoolfile(path: string): SpoolfileRead {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    return { ok: false, reason: (error as NodeJS.ErrnoException).code === "ENOENT" ? "file not found" : (error as Error).message };
  }
  const decoded = decodeSpoolfileBytes(bytes, path);
  if ("diagnostic" in decoded) return { ok: false, diagnostic: decoded.diagnostic };
  return { ok: true, text: decoded.text, fingerprint: configFingerprint(bytes) };
}

/** The identity of a config file's content: sha256 of its bytes, hex (what `sha256sum` prints). */
export function configFingerprint(bytes: Buffer | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}
