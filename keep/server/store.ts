// The data directory's SQLite database (DIR/keep.db): sealed secrets and token hashes. Values are
// sealed before they reach SQLite and opened only on the way out, so no file under DIR holds one
// in the clear (keep/docs/decisions.md, "Storage").
import Database from "better-sqlite3";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import { isUnder } from "../common/paths.js";
import { open, seal } from "./crypto.js";
import { KeyRing } from "./keys.js";

interface SecretRow {
  path: string;
  key_id: string;
  nonce: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

export interface TokenRow {
  identity: string;
  hash: Buffer;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS secrets (
  path TEXT PRIMARY KEY NOT NULL,
  key_id TEXT NOT NULL,
  nonce BLOB NOT NULL,
  ciphertext BLOB NOT NULL,
  tag BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tokens (
  identity TEXT PRIMARY KEY NOT NULL,
  hash BLOB NOT NULL
) WITHOUT ROWID;
`;

/** Creates DIR (0700) when missing. */
export function ensureDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

export class SecretStore {
  private readonly db: Database.Database;
  readonly keys: KeyRing;

  constructor(dir: string) {
    ensureDataDir(dir);
    this.keys = new KeyRing(dir);
    const file = join(dir, "keep.db");
    closeSync(openSync(file, "a", 0o600));
    this.db = new Database(file);
    this.db.pragma("busy_timeout = 5000");
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("secure_delete = ON");
    this.db.exec(SCHEMA);
  }

  private readonly statements = new Map<string, Database.Statement>();

  /** Prepared once per SQL text. */
  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  close(): void {
    this.db.close();
  }

  // Sealed rows (ciphertext only, never a plaintext) and token hashes are kept in memory until
  // another connection (an admin command) commits: SQLite's data_version changes then. Each read
  // checks it, so a change counts at the next request; this connection's own writes clear them too.
  private version = -1;
  private rowCache = new Map<string, SecretRow | null>();
  private rowCacheBytes = 0;
  private tokenCache: TokenRow[] | undefined;
  private static readonly ROW_CACHE_BYTES = 32 * 1024 * 1024;

  private refresh(): void {
    const version = this.stmt("PRAGMA data_version").pluck().get() as number;
    if (version !== this.version) {
      this.version = version;
      this.invalidate();
    }
  }

  private invalidate(): void {
    this.rowCache.clear();
    this.rowCacheBytes = 0;
    this.tokenCache = undefined;
  }

  private row(path: string): SecretRow | undefined {
    this.refresh();
    const cached = this.rowCache.get(path);
    if (cached !== undefined) return cached ?? undefined;
    const row = this.stmt("SELECT * FROM secrets WHERE path = ?").get(path) as SecretRow | undefined;
    const size = (row?.ciphertext.length ?? 0) + path.length + 64;
    if (this.rowCacheBytes + size > SecretStore.ROW_CACHE_BYTES) this.invalidate();
    this.rowCache.set(path, row ?? null);
    this.rowCacheBytes += size;
    return row;
  }

  put(path: string, value: Buffer): void {
    this.invalidate();
    const keyId = this.keys.currentId;
    const sealed = seal(this.keyFor(keyId), path, value);
    this.stmt("INSERT OR REPLACE INTO secrets (path, key_id, nonce, ciphertext, tag) VALUES (?, ?, ?, ?, ?)")
      .run(path, keyId, sealed.nonce, sealed.ciphertext, sealed.tag);
  }

  /** The opened value, or undefined when the path is not stored. Throws OpenError when tampered. */
  get(path: string): Buffer | undefined {
    const row = this.row(path);
    return row ? open(this.keyFor(row.key_id), row.path, row) : undefined;
  }

  has(path: string): boolean {
    return this.row(path) !== undefined;
  }

  remove(path: string): boolean {
    this.invalidate();
    return this.stmt("DELETE FROM secrets WHERE path = ?").run(path).changes > 0;
  }

  /** Stored paths under `prefix` ("" for all), in byte order. */
  paths(prefix: string): string[] {
    const rows = (
      prefix === ""
        ? this.stmt("SELECT path FROM secrets ORDER BY path").all()
        : this.stmt("SELECT path FROM secrets WHERE path > ? AND path < ? ORDER BY path").all(`${prefix}/`, `${prefix}0`)
    ) as { path: string }[];
    return rows.map((r) => r.path).filter((p) => isUnder(p, prefix));
  }

  /** Re-seals every value under a new key in one transaction, then removes the old key files. */
  rotateKey(): { keyId: string; resealed: number } {
    const oldIds = new Set((this.stmt("SELECT DISTINCT key_id FROM secrets").all() as { key_id: string }[]).map((r) => r.key_id));
    oldIds.add(this.keys.currentId);
    this.invalidate();
    const keyId = this.keys.createNext();
    const rows = this.stmt("SELECT * FROM secrets").all() as SecretRow[];
    const update = this.stmt("UPDATE secrets SET key_id = ?, nonce = ?, ciphertext = ?, tag = ? WHERE path = ?");
    this.db.transaction(() => {
      for (const row of rows) {
        const value = open(this.keyFor(row.key_id), row.path, row);
        const sealed = seal(this.keyFor(keyId), row.path, value);
        value.fill(0);
        update.run(keyId, sealed.nonce, sealed.ciphertext, sealed.tag, row.path);
      }
    })();
    this.db.pragma("wal_checkpoint(TRUNCATE)");
    for (const id of oldIds) if (id !== keyId) this.keys.retire(id);
    return { keyId, resealed: rows.length };
  }

  /** The token hashes (re-read after another connection's commit, see refresh). */
  tokens(): TokenRow[] {
    this.refresh();
    this.tokenCache ??= this.stmt("SELECT identity, hash FROM tokens").all() as TokenRow[];
    return this.tokenCache;
  }

  setToken(identity: string, hash: Buffer): void {
    this.invalidate();
    this.stmt("INSERT OR REPLACE INTO tokens (identity, hash) VALUES (?, ?)").run(identity, hash);
  }

  revokeToken(identity: string): boolean {
    this.invalidate();
    return this.stmt("DELETE FROM tokens WHERE identity = ?").run(identity).changes > 0;
  }

  private keyFor(id: string): Buffer {
    const key = this.keys.get(id);
    if (!key) throw new Error(`key ${id} is missing from DIR/keys`);
    return key;
  }
}
