// Master keys: 32 random bytes per key in DIR/keys/<id>.key (mode 0600, directory 0700). The
// newest id is the current one; older files exist only until `keep rotate-key` has re-sealed every
// row. A key file is created whole (written to a temporary name, then linked), so two processes
// starting on an empty DIR agree on one key.
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, readdirSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

const KEY_FILE = /^k(\d+)\.key$/;

export class KeyRing {
  private readonly keys = new Map<string, Buffer>();

  constructor(private readonly dir: string) {
    mkdirSync(this.keyDir, { recursive: true, mode: 0o700 });
    this.reload();
    if (this.keys.size === 0) this.create(1);
  }

  private get keyDir(): string {
    return join(this.dir, "keys");
  }

  /** Re-reads the key files (after a rotation by another process). */
  reload(): void {
    this.keys.clear();
    for (const name of readdirSync(this.keyDir)) {
      if (!KEY_FILE.test(name)) continue;
      const key = readFileSync(join(this.keyDir, name));
      if (key.length !== 32) throw new Error(`key file keys/${name} does not hold 32 bytes`);
      this.keys.set(name.slice(0, -4), key);
    }
  }

  /** The id of the newest key ("k1", "k2", …). */
  get currentId(): string {
    let best = 0;
    for (const id of this.keys.keys()) best = Math.max(best, Number(id.slice(1)));
    return `k${best}`;
  }

  get(id: string): Buffer | undefined {
    if (!this.keys.has(id)) this.reload();
    return this.keys.get(id);
  }

  /** Creates the next key and returns its id; the caller re-seals and then calls `retire`. */
  createNext(): string {
    return this.create(Number(this.currentId.slice(1)) + 1);
  }

  retire(id: string): void {
    unlinkSync(join(this.keyDir, `${id}.key`));
    this.keys.delete(id);
  }

  private create(n: number): string {
    const id = `k${n}`;
    const tmp = join(this.keyDir, `.${id}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
    const fd = openSync(tmp, "wx", 0o600);
    try {
      writeSync(fd, randomBytes(32));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, join(this.keyDir, `${id}.key`));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    } finally {
      unlinkSync(tmp);
    }
    this.reload();
    return id;
  }
}
