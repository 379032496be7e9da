// Policy globs, matched per segment: a literal matches itself, `*` exactly one segment, and `**`
// (last segment only) zero or more segments. `app/**` matches `app`, `app/X`, `app/a/Y`, never
// `apps/X`. Partial wildcards (`ap*`) are invalid.

export interface Glob {
  readonly source: string;
  readonly segments: readonly string[];
}

import { isValidSegment } from "../common/paths.js";

/** The compiled glob, or an error message naming what is wrong. */
export function compileGlob(source: string): Glob | string {
  if (source === "") return "a glob cannot be empty";
  const segments = source.split("/");
  for (const [i, seg] of segments.entries()) {
    if (seg === "**") {
      if (i !== segments.length - 1) return `"**" may only be the last segment (in ${JSON.stringify(source)})`;
    } else if (seg !== "*" && !isValidSegment(seg)) {
      return `invalid segment ${JSON.stringify(seg)} in ${JSON.stringify(source)} (a segment is a literal, "*" or a final "**")`;
    }
  }
  return { source, segments };
}

export function globMatches(glob: Glob, path: string): boolean {
  const parts = path.split("/");
  const segs = glob.segments;
  for (let i = 0; i < segs.length; i++) {
    if (segs[i] === "**") return true;
    if (i >= parts.length) return false;
    if (segs[i] !== "*" && segs[i] !== parts[i]) return false;
  }
  return parts.length === segs.length;
}
