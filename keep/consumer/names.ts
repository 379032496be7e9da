// Path → variable name (keep/README.md, "Names"): the last segment, which must match
// ^[A-Za-z_][A-Za-z0-9_]*$. A bad name, or two different paths giving one name, refuses the whole
// set before anything is read.
import { refusal } from "./errors.js";

export const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function variableName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Name → path for the whole set (distinct paths, in the given order), or a refusal KeepError. */
export function nameSet(paths: readonly string[], extraCheck?: (name: string) => string | undefined): Map<string, string> {
  const names = new Map<string, string>();
  for (const path of paths) {
    const name = variableName(path);
    if (!NAME.test(name)) throw refusal("invalid_name", `${path}: "${name}" is not a valid variable name (^[A-Za-z_][A-Za-z0-9_]*$); nothing was read`);
    const why = extraCheck?.(name);
    if (why) throw refusal("invalid_name", `${path}: ${why}; nothing was read`);
    const other = names.get(name);
    if (other !== undefined && other !== path) throw refusal("name_collision", `${other} and ${path} both give the name ${name}; nothing was read`);
    names.set(name, path);
  }
  return names;
}
