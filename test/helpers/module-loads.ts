// Which modules a child process loads: a module-resolution hook (node:module register) appends every
// resolved URL to a file; the test then reads the list. Used to check that a command loads only what
// it needs (docs/decisions.md D140), without timing anything.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const HOOKS = `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (process.env.SPOOL_TEST_MODULE_DUMP) appendFileSync(process.env.SPOOL_TEST_MODULE_DUMP, resolved.url + "\\n");
  return resolved;
}
`;

/** Runs `node <args>` with the recorder; resolves the process's exit, output and the distinct URLs loaded. */
export function runRecordingLoads(dir: string, args: readonly string[], options: { cwd?: string; input?: string } = {}): { code: number; stdout: string; stderr: string; loaded: string[] } {
  const hooks = join(dir, "record-hooks.mjs");
  const register = join(dir, "record-register.mjs");
  writeFileSync(hooks, HOOKS);
  writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const dump = join(dir, `loads-${process.hrtime.bigint()}.txt`);
  writeFileSync(dump, "");
  const result = spawnSync(process.execPath, ["--import", pathToFileURL(register).href, ...args], {
    cwd: options.cwd,
    input: options.input,
    encoding: "utf8",
    env: { ...process.env, SPOOL_TEST_MODULE_DUMP: dump },
  });
  const loaded = [...new Set(readFileSync(dump, "utf8").split("\n").filter((line) => line !== ""))];
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr, loaded };
}
