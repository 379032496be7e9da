import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (compiled tests live in dist/test/…). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

export function repoPath(...parts: string[]): string {
  return join(repoRoot, ...parts);
}

/** The built CLI entry point. */
export const spoolBin = repoPath("dist", "cli", "main.js");
