// A fresh directory under the OS temp dir for a test file; removed by the returned cleanup.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function makeTempDir(prefix: string): { path: string; cleanup(): void } {
  const path = mkdtempSync(join(tmpdir(), `spool-${prefix}-`));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
