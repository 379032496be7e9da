// `spool verify-release`: exit 0 all checks passed, 1 a check failed (`verify-release: <reason>` on
// stderr, nothing on stdout), 2 usage error (docs/releases.md). Light on purpose: node:crypto and
// node:fs only, nothing of the runtime or the compiler.
import type { CommandOutput } from "../io.js";
import { ReleaseCheckFailed } from "../release/failure.js";
import { resultJson, resultLines, verifyRelease, type VerifyOptions } from "../release/verify.js";

export interface VerifyReleaseFlags extends Partial<VerifyOptions> {
  readonly json?: boolean;
}

const stdio: CommandOutput = {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stdoutRaw: (text) => process.stdout.write(text),
  stderr: (line) => process.stderr.write(`${line}\n`),
};

export async function runVerifyRelease(positionals: readonly string[], flags: VerifyReleaseFlags, out: CommandOutput = stdio): Promise<number> {
  if (positionals.length > 0) {
    out.stderr(`verify-release: unexpected argument ${JSON.stringify(positionals[0])} (every input is a flag; see spool verify-release --help)`);
    return 2;
  }
  if (typeof flags.checksums !== "string") {
    out.stderr("verify-release: --checksums is required (the release's spool_<version>_checksums.txt)");
    return 2;
  }
  try {
    const result = await verifyRelease({ ...flags, checksums: flags.checksums });
    if (flags.json) out.stdout(resultJson(result));
    else for (const line of resultLines(result)) out.stdout(line);
    return 0;
  } catch (error) {
    if (!(error instanceof ReleaseCheckFailed)) throw error;
    out.stderr(`verify-release: ${error.message}`);
    return 1;
  }
}
