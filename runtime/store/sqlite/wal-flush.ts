// The fsync of a durable group commit, off the event loop. better-sqlite3 is synchronous, so with
// synchronous=FULL the WAL fsync inside COMMIT blocks every request in flight for as long as the
// disk takes (0.2 ms on a quiet disk, several ms on a busy one). A durable group therefore commits
// with synchronous=NORMAL, which writes the WAL frames but skips the commit's fsync, and this flusher
// then fsyncs the WAL file on the libuv thread pool; the group's callers are answered only once that
// fsync has finished. That is exactly what FULL does in WAL mode (SQLite's FULL differs from NORMAL
// only by that one fsync of the WAL after the commit's frames; NORMAL still syncs the WAL header
// when the WAL restarts, and every checkpoint), so an answered write survives power loss as before.
// Linux flushes a file's dirty pages whatever descriptor fsync is called on (PostgreSQL's
// checkpointer relies on the same), so a descriptor of our own, read-only, serves. SQLite keeps its
// WAL locks on the -shm file, so opening and closing this descriptor touches none of its locks.
import { closeSync, fsync, fsyncSync, openSync } from "node:fs";
import { dirname } from "node:path";

/** How the WAL's descriptor is flushed: fs.fsync, or a stand-in a test controls. */
export type WalSync = (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void;

export class WalFlusher {
  private fd: number | null = null;
  private inFlight = false;
  /** Callers whose commit came after the fsync in flight started: they need the next one. */
  private waiting: { resolve: () => void; reject: (error: unknown) => void }[] = [];

  constructor(
    private readonly walPath: string,
    private readonly sync: WalSync = fsync,
  ) {}

  /** Resolves once an fsync of the WAL that started after this call has completed. */
  flush(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.inFlight) this.start();
    });
  }

  /** Resolves once no fsync is in flight or waiting. */
  async idle(): Promise<void> {
    while (this.inFlight || this.waiting.length > 0) await this.flush().catch(() => {});
  }

  /** Closes the descriptor; call after idle(). */
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private start(): void {
    const callers = this.waiting;
    this.waiting = [];
    let fd: number;
    try {
      fd = this.descriptor();
    } catch (error) {
      for (const caller of callers) caller.reject(error);
      return;
    }
    this.inFlight = true;
    this.sync(fd, (error) => {
      this.inFlight = false;
      for (const caller of callers) {
        if (error) caller.reject(error);
        else caller.resolve();
      }
      if (this.waiting.length > 0) this.start();
    });
  }

  /**
   * Opened at the first flush, when SQLite has certainly created the WAL. Its directory entry is
   * synced once, so the file itself is sure to be found after a power loss.
   */
  private descriptor(): number {
    if (this.fd !== null) return this.fd;
    const fd = openSync(this.walPath, "r");
    const directory = openSync(dirname(this.walPath), "r");
    try {
      fsyncSync(directory);
    } finally {
      closeSync(directory);
    }
    this.fd = fd;
    return fd;
  }
}
