// Route A's output for GitHub Actions (keep/README.md, "keep fetch"): the mask lines, and the
// assignments appended to the runner's env file. Pure functions; the delimiter's random source is
// a parameter so tests can force a collision.
import { randomBytes } from "node:crypto";

/** Names the runner refuses (or that would hijack later steps): refused like invalid names. */
export function runnerRefusesName(name: string): string | undefined {
  if (/^(GITHUB_|RUNNER_)/i.test(name)) return `"${name}" is reserved by the runner (GITHUB_* and RUNNER_* are refused)`;
  if (name.toUpperCase() === "NODE_OPTIONS") return `"${name}" is refused by the runner (NODE_OPTIONS)`;
  // Variables that make every later step run code of the value's choosing: a secret is never one.
  if (/^(BASH_ENV|ENV|LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT)$/i.test(name)) return `"${name}" would change how every later step runs programs, and is refused`;
  return undefined;
}

/** `%`→`%25`, CR→`%0D`, LF→`%0A`: the runner's escaping of workflow-command data. */
export function escapeCommandData(text: string): string {
  return text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** One `::add-mask::` line (with its LF) per non-empty line of every value (split on CRLF, LF, CR). */
export function maskLines(values: readonly string[]): string {
  let out = "";
  for (const value of values) {
    for (const line of value.split(/\r\n|\r|\n/)) {
      if (line !== "") out += `::add-mask::${escapeCommandData(line)}\n`;
    }
  }
  return out;
}

/** 32 lowercase hex characters from 128 random bits. */
export function randomDelimiter(): string {
  return randomBytes(16).toString("hex");
}

/**
 * The text appended to the env file: `NAME=value` for a value without CR or LF, otherwise
 * `NAME<<D`, the value, `D`, each ending in LF, with D drawn anew for each assignment and redrawn
 * while it occurs in the value.
 */
export function formatAssignments(secrets: readonly { name: string; value: string }[], draw: () => string = randomDelimiter): string {
  let out = "";
  for (const { name, value } of secrets) {
    if (!/[\r\n]/.test(value)) {
      out += `${name}=${value}\n`;
      continue;
    }
    let delimiter = draw();
    while (!/^[0-9a-f]{32}$/.test(delimiter) || value.includes(delimiter)) delimiter = draw();
    out += `${name}<<${delimiter}\n${value}\n${delimiter}\n`;
  }
  return out;
}
