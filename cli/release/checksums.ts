// Step 1: the checksums file (sha256sum format) and the files it lists.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { fail, readError } from "./failure.js";

export interface ChecksumEntry {
  /** The name as the checksums file gives it. */
  readonly name: string;
  /** Lowercase hex. */
  readonly sha256: string;
}

const LINE = /^\s*([0-9a-fA-F]{64})\s+\*?(.+?)\s*$/;

/** The entries of a checksums file's text: blank lines skipped, any other line must be `<hex>  [*]<name>`. */
export function parseChecksums(text: string, file: string): ChecksumEntry[] {
  const entries: ChecksumEntry[] = [];
  const lines = text.split("\n");
  for (const [i, raw] of lines.entries()) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") continue;
    const m = LINE.exec(line);
    if (!m) fail(`checksums file "${file}" line ${i + 1} is malformed (want "<64 hex digits>  <file name>")`);
    entries.push({ name: m[2], sha256: m[1].toLowerCase() });
  }
  if (entries.length === 0) fail(`checksums file "${file}" has no entries`);
  return entries;
}

/** The file an entry names: relative to the base dir unless absolute. */
export function entryPath(entry: ChecksumEntry, baseDir: string): string {
  return isAbsolute(entry.name) ? entry.name : resolve(baseDir, entry.name);
}

export function sha256File(path: string): Promise<string> {
  return new Promise((done, reject) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("error", reject)
      .on("data", (chunk) => hash.update(chunk))
      .on("end", () => done(hash.digest("hex")));
  });
}

/** Every listed file exists and has its SHA-256; the first that does not fails the run. */
export async function verifyEntries(entries: readonly ChecksumEntry[], baseDir: string): Promise<void> {
  for (const entry of entries) {
    let actual: string;
    try {
      actual = await sha256File(entryPath(entry, baseDir));
    } catch (error) {
      fail(`checksum mismatch for "${entry.name}": cannot read ${entryPath(entry, baseDir)}: ${readError(error)}`);
    }
    if (actual !== entry.sha256) fail(`checksum mismatch for "${entry.name}"`);
  }
}
