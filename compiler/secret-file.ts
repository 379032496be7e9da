// The hardened `file:` secret reader, shared by the compiler (which resolves `file:` secrets and
// `{file.X}` placeholders) and the runtime (whose signer reads a rotated secret file again,
// docs/delivery.md "Signing"). The runtime reaches it through compiler/index.ts.
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";

/** The largest file a `file:` secret or `{file.X}` placeholder may name. */
export const MAX_SECRET_FILE_BYTES = 1024 * 1024;

/** A file that exists but may not be read as a secret: `reason` says why, for the diagnostic. */
class UnreadableFileError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
    this.name = "UnreadableFileError";
  }
}

/** Why a file could not be read, in a few words for a diagnostic. */
export function unreadableReason(error: unknown): string {
  if (error instanceof UnreadableFileError) return error.reason;
  const code = (error as { code?: string }).code;
  if (code === "ENOENT") return "no such file";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  return error instanceof Error ? error.message : String(error);
}

/**
 * Reads a `file:` secret or placeholder file: a regular file of at most MAX_SECRET_FILE_BYTES, or
 * throws. Opened without blocking and checked before reading, so `/dev/zero` (endless) or a FIFO
 * (waits for a writer forever) is refused instead of hanging the compile.
 */
export function readSecretFile(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UnreadableFileError(path, "it is not a regular file");
    if (stat.size > MAX_SECRET_FILE_BYTES) throw new UnreadableFileError(path, `it is larger than ${MAX_SECRET_FILE_BYTES} bytes`);
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}
