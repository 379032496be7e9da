// `keep audit verify FILE`: checks that every line is JSON with the audit fields and that its
// `prev` is the SHA-256 of the line before it, and names the first line that breaks the chain.
import { readFileSync } from "node:fs";
import { GENESIS, lineHash } from "./audit.js";

export type VerifyResult = { ok: true; lines: number } | { ok: false; line: number; reason: string };

export function verifyAuditText(text: string): VerifyResult {
  if (text === "") return { ok: true, lines: 0 };
  if (!text.endsWith("\n")) {
    const n = text.split("\n").length;
    return { ok: false, line: n, reason: "the last line is incomplete (no newline)" };
  }
  const lines = text.slice(0, -1).split("\n");
  let prev = GENESIS;
  for (const [i, line] of lines.entries()) {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return { ok: false, line: i + 1, reason: "not a JSON line" };
    }
    for (const key of ["ts", "identity", "op", "path", "prev"]) {
      if (typeof entry[key] !== "string") return { ok: false, line: i + 1, reason: `missing field "${key}"` };
    }
    if (entry.prev !== prev) return { ok: false, line: i + 1, reason: "prev does not match the SHA-256 of the line before (edited, deleted or inserted line)" };
    prev = lineHash(line);
  }
  return { ok: true, lines: lines.length };
}

export function verifyAuditFile(file: string): VerifyResult {
  return verifyAuditText(readFileSync(file, "utf8"));
}
