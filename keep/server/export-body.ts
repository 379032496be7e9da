// The body of `POST /v1/export`: exactly `{"paths":[…]}` with at least one path, each valid and
// distinct. Anything else is a fixed message (the body is never echoed).
import { isValidPath } from "../common/paths.js";

export function parseExportBody(body: Buffer): string[] | string {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    return "the body is not JSON";
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return 'the body must be {"paths":[…]}';
  const keys = Object.keys(doc);
  if (keys.length !== 1 || keys[0] !== "paths") return 'the body must be {"paths":[…]} and nothing else';
  const paths = (doc as { paths: unknown }).paths;
  if (!Array.isArray(paths) || paths.length === 0) return '"paths" must be a non-empty array';
  if (!paths.every((p): p is string => typeof p === "string" && isValidPath(p))) return '"paths" holds an invalid path';
  if (new Set(paths).size !== paths.length) return '"paths" holds a duplicate path';
  return paths;
}
