import { randomBytes } from "node:crypto";
import { open, readFile, realpath, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

// The only file writer of the compiler: a temp file in the same directory (so rename is atomic on
// the same file system), fsync'd, renamed over the target, then the directory fsync'd so the
// rename itself survives a crash. A symlink is followed (the file it names is replaced, the link
// stays), and the new file keeps the old one's permission bits: a Spoolfile holding raw: secrets
// that was 0600 stays 0600.
export async function writeFileAtomically(linkOrPath: string, text: string | Uint8Array): Promise<void> {
  const path = await realpath(linkOrPath).catch(() => linkOrPath);
  const mode = await stat(path).then(
    (s) => s.mode & 0o7777,
    () => 0o644,
  );
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await open(temp, "wx", mode);
  try {
    // open()'s mode is filtered by the umask; the old file's bits are what the new one must have.
    await handle.chmod(mode);
    await handle.writeFile(text);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(dir);
}

async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some file systems refuse fsync on directories; the rename is still atomic.
  }
}

export interface Replacement {
  /** The exact bytes the file held before. */
  readonly previous: Buffer;
  /** Restores the previous bytes, atomically. */
  rollback(): Promise<void>;
}

/** Writes `text` atomically and returns a handle that can put the old bytes back. */
export async function replaceFileAtomically(path: string, text: string): Promise<Replacement> {
  const previous = await readFile(path);
  await writeFileAtomically(path, text);
  return { previous, rollback: () => writeFileAtomically(path, previous) };
}
