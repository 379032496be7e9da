/** A release check that failed; the message names the file and the check (exit 1). */
export class ReleaseCheckFailed extends Error {}

export function fail(reason: string): never {
  throw new ReleaseCheckFailed(reason);
}

/** A readable reason for a failed read: the error code (ENOENT …) or the message. */
export function readError(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return e.code === "ENOENT" ? "no such file" : e.code ?? e.message;
}
