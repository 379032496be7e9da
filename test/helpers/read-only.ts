// Makes a file or directory unwritable for a test and gives back the undo, or null where this
// machine cannot: modes do it for ordinary users; root ignores modes, so `chattr +i` then (which
// needs the chattr tool and a filesystem with the immutable attribute).
import { execFileSync } from "node:child_process";
import { chmodSync, statSync } from "node:fs";

export function makeReadOnly(path: string): (() => void) | null {
  if (process.getuid?.() !== 0) {
    const mode = statSync(path).mode & 0o7777;
    chmodSync(path, mode & ~0o222);
    return () => chmodSync(path, mode);
  }
  try {
    execFileSync("chattr", ["+i", path], { stdio: "ignore" });
    return () => execFileSync("chattr", ["-i", path], { stdio: "ignore" });
  } catch {
    return null;
  }
}
