// Secret paths and prefixes (keep/README.md, "Paths"): segments of [A-Za-z0-9._-]+ joined by "/",
// no leading or trailing "/", no empty, "." or ".." segment. Shared by the server and consumers.

const SEGMENT = /^[A-Za-z0-9._-]+$/;

/** One literal segment of a path (or of a policy glob). */
export function isValidSegment(segment: string): boolean {
  return SEGMENT.test(segment) && segment !== "." && segment !== "..";
}

export function isValidPath(path: string): boolean {
  if (typeof path !== "string" || path.length === 0 || path.length > 1024) return false;
  return path.split("/").every(isValidSegment);
}

/** A path, or a prefix marked by its trailing "/" (not "/" alone), as consumers are given them. */
export function isValidPathOrPrefix(given: string): boolean {
  return given.endsWith("/") ? given !== "/" && normalizePrefix(given) !== undefined : isValidPath(given);
}

/**
 * A prefix as given ("app" or "app/") in its canonical form ("app"), or undefined when invalid.
 * The empty prefix ("" or "/") covers every path.
 */
export function normalizePrefix(prefix: string): string | undefined {
  if (typeof prefix !== "string") return undefined;
  const bare = prefix.endsWith("/") ? prefix.slice(0, -1) : prefix;
  if (bare === "") return "";
  return isValidPath(bare) ? bare : undefined;
}

/** Whether `path` lies strictly below `prefix` (the empty prefix covers everything). */
export function isUnder(path: string, prefix: string): boolean {
  return prefix === "" ? true : path.startsWith(`${prefix}/`);
}

/** Byte-order comparison (paths are ASCII, so UTF-16 order equals byte order). */
export function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
