// The runtime secret pools (docs/secrets.md): every version opened in memory for ingress, sealed
// in the store. One implementation of add, list and delete behind every binding (the Admin API's
// HTTP routes; MCP's rotate_secret goes through them). Writes, pruning and the refresh from the
// store run one at a time, so a refresh never undoes a write it did not see.
import { randomBytes } from "node:crypto";
import { SECRET_KEY_VARIABLE } from "../../compiler/index.js";
import type { NamedSecret, SpoolConfig } from "../../compiler/ir.js";
import type { ResolvedSecret } from "../auth/types.js";
import { ApiError, apiError } from "../errors.js";
import type { RuntimeSecretKey, RuntimeSecretRow } from "../store/records.js";
import { StoreError, type Store } from "../store/store.js";
import type { Clock } from "../time/clock.js";
import type { Sealer } from "./seal.js";

export const BOOTSTRAP_ID = "sec_bootstrap";
/** Expired versions are pruned this often (and at start, and before a full pool refuses an add). */
export const PRUNE_INTERVAL_MS = 5 * 60_000;
/** PostgreSQL: how often an instance re-reads the versions other instances wrote. */
export const POSTGRES_REFRESH_INTERVAL_MS = 2_000;

interface Version {
  readonly id: string;
  readonly value: Buffer;
  readonly notBeforeMs: number;
  readonly notAfterMs: number | null;
  readonly createdAtMs: number;
}

/** A version as the Admin API shows it: never its value; times RFC 3339 UTC. */
export interface VersionView {
  id: string;
  not_before: string;
  not_after?: string;
  created_at?: string;
}

export interface NewVersion {
  value: string;
  notBeforeMs?: number;
  notAfterMs?: number;
}

export interface RuntimeSecretsDeps {
  store: Store;
  /** Null without SPOOL_SECRET_ENCRYPTION_KEY: the pools are unavailable (503). */
  sealer: Sealer | null;
  clock: Clock;
  /** spool_runtime_secret_gc_pruned_total{pool}. */
  onPruned(pool: string, count: number): void;
  /** A background prune or refresh failed (the versions in memory keep serving). */
  onError(task: string, error: unknown): void;
  /** Re-read the store this often (other instances write it); 0: never. */
  refreshIntervalMs: number;
}

/** What ingress asks of the pools: the versions of one, with their windows. */
export interface RuntimeSecretVersions {
  versionsOf(pool: string): readonly ResolvedSecret[];
}

export class RuntimeSecrets implements RuntimeSecretVersions {
  private pools = new Map<string, readonly Version[]>();
  private resolved = new Map<string, readonly ResolvedSecret[]>();
  private turn: Promise<unknown> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  /** Rows a refresh could not open, reported once each (another instance may seal with another key). */
  private readonly unopenable = new Set<string>();
  /** The runtime pools of the config serving (a reload seeds only the ones it adds). */
  private declared = new Set<string>();

  constructor(private readonly deps: RuntimeSecretsDeps) {}

  get available(): boolean {
    return this.deps.sealer !== null;
  }

  versionsOf(pool: string): readonly ResolvedSecret[] {
    return this.resolved.get(pool) ?? [];
  }

  /**
   * At start: prune, open every stored version (one that does not open stops the start, naming
   * pool and id) and seed the pools that have none from their `value`. Then the timers run.
   */
  async start(config: SpoolConfig): Promise<void> {
    this.declared = runtimePoolIds(config);
    if (!this.deps.sealer) return;
    await this.prune();
    const rows = await this.deps.store.listRuntimeSecrets();
    const pools = new Map<string, Version[]>();
    for (const row of rows) {
      let value: Buffer;
      try {
        value = this.deps.sealer.open(row.pool, row.id, row.sealed);
      } catch (error) {
        throw new Error(`runtime secret ${JSON.stringify(row.pool)} version ${row.id} cannot be opened with ${SECRET_KEY_VARIABLE}: ${(error as Error).message}`);
      }
      pools.set(row.pool, [...(pools.get(row.pool) ?? []), versionOf(row, value)]);
    }
    for (const [pool, versions] of pools) this.setPool(pool, versions);
    await this.seed(config, [...this.declared]);
    this.timers.push(setInterval(() => void this.prune().catch((error: unknown) => this.deps.onError("prune", error)), PRUNE_INTERVAL_MS));
    if (this.deps.refreshIntervalMs > 0) {
      this.timers.push(setInterval(() => void this.refresh().catch((error: unknown) => this.deps.onError("refresh", error)), this.deps.refreshIntervalMs));
    }
    for (const timer of this.timers) timer.unref();
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }

  /**
   * A reload: the pools it adds are seeded from their `value`; a pool that stays is not, so a reload
   * never brings back a bootstrap version an operator deleted (versions of removed pools stay stored).
   */
  reconfigure(config: SpoolConfig): void {
    const added = config.secrets.filter((s) => s.runtime && !this.declared.has(s.id)).map((s) => s.id);
    this.declared = runtimePoolIds(config);
    if (!this.deps.sealer || added.length === 0) return;
    void this.seed(config, added).catch((error: unknown) => this.deps.onError("seed", error));
  }

  /** Newest not_before first, ties by id. */
  list(config: SpoolConfig, name: string): { name: string; versions: VersionView[] } {
    this.usablePool(config, name);
    const versions = [...(this.pools.get(name) ?? [])].sort((a, b) => b.notBeforeMs - a.notBeforeMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { name, versions: versions.map((v) => viewOf(v, false)) };
  }

  /** The pool's checks (declared, runtime, available), then the body's (`readNew` and the window), then the add. */
  async add(config: SpoolConfig, name: string, readNew: () => Promise<NewVersion>): Promise<VersionView> {
    const pool = this.usablePool(config, name);
    const wanted = await readNew();
    if (wanted.value.trim() === "") throw apiError("secret_value_empty", "value is missing or blank");
    const nowMs = this.deps.clock.now();
    const notBeforeMs = wanted.notBeforeMs ?? wholeSecond(nowMs);
    if (wanted.notAfterMs !== undefined && wanted.notAfterMs <= notBeforeMs) {
      throw apiError("secret_invalid_window", "not_after must be after not_before");
    }
    return this.serially(async () => {
      const stored = await this.persisting(() => this.deps.store.listRuntimeSecrets(name));
      if (stored.length >= pool.maxVersions) {
        await this.prunePool(name);
        const left = await this.persisting(() => this.deps.store.listRuntimeSecrets(name));
        if (left.length >= pool.maxVersions) throw apiError("secret_pool_full", `secret ${JSON.stringify(name)} holds max_versions ${pool.maxVersions} versions; delete one first`);
      }
      const version: Version = { id: `sec_${randomBytes(8).toString("hex")}`, value: Buffer.from(wanted.value, "utf8"), notBeforeMs, notAfterMs: wanted.notAfterMs ?? null, createdAtMs: nowMs };
      await this.insert(name, version);
      return viewOf(version, true);
    });
  }

  async remove(config: SpoolConfig, name: string, id: string): Promise<void> {
    this.usablePool(config, name);
    await this.serially(async () => {
      const deleted = await this.persisting(() => this.deps.store.deleteRuntimeSecret(name, id));
      if (!deleted) throw apiError("secret_id_not_found", `secret ${JSON.stringify(name)} has no version ${id}`);
      this.setPool(name, (this.pools.get(name) ?? []).filter((v) => v.id !== id));
    });
  }

  /** Deletes the expired versions of every pool, counted by pool. */
  prune(): Promise<void> {
    return this.serially(async () => this.forget(await this.deps.store.pruneRuntimeSecrets()));
  }

  /** Takes the store's versions as they are now: what other instances added or deleted. */
  refresh(): Promise<void> {
    const sealer = this.deps.sealer;
    if (!sealer) return Promise.resolve();
    return this.serially(async () => {
      const rows = await this.deps.store.listRuntimeSecrets();
      const pools = new Map<string, Version[]>();
      for (const row of rows) {
        const known = this.pools.get(row.pool)?.find((v) => v.id === row.id);
        let value = known?.value;
        if (!value) {
          try {
            value = sealer.open(row.pool, row.id, row.sealed);
          } catch (error) {
            const key = `${row.pool}\n${row.id}`;
            if (!this.unopenable.has(key)) {
              this.unopenable.add(key);
              this.deps.onError("refresh", new Error(`runtime secret ${JSON.stringify(row.pool)} version ${row.id} cannot be opened: ${(error as Error).message}`));
            }
            continue;
          }
        }
        pools.set(row.pool, [...(pools.get(row.pool) ?? []), versionOf(row, value)]);
      }
      for (const pool of this.pools.keys()) if (!pools.has(pool)) this.setPool(pool, []);
      for (const [pool, versions] of pools) this.setPool(pool, versions);
    });
  }

  /** Seeds `sec_bootstrap` from `value` into each of `pools` with no stored version. */
  private seed(config: SpoolConfig, pools: readonly string[]): Promise<void> {
    return this.serially(async () => {
      const nowMs = this.deps.clock.now();
      for (const secret of config.secrets) {
        if (!secret.runtime || !pools.includes(secret.id) || !secret.source?.value) continue;
        if ((await this.deps.store.listRuntimeSecrets(secret.id)).length > 0) continue;
        const notAfterMs = secret.validUntilMs;
        if (notAfterMs !== null && notAfterMs <= nowMs) continue;
        const version: Version = { id: BOOTSTRAP_ID, value: Buffer.from(secret.source.value, "utf8"), notBeforeMs: secret.validFromMs ?? wholeSecond(nowMs), notAfterMs, createdAtMs: nowMs };
        try {
          await this.insert(secret.id, version);
        } catch (error) {
          // Another instance seeded it first (PostgreSQL); its row is read by the next refresh.
          if (!(error instanceof ApiError && error.code === "secret_duplicate_id")) throw error;
        }
      }
    });
  }

  private async prunePool(pool: string): Promise<void> {
    this.forget(await this.persisting(() => this.deps.store.pruneRuntimeSecrets(pool)));
  }

  private forget(removed: readonly RuntimeSecretKey[]): void {
    const counts = new Map<string, number>();
    for (const { pool, id } of removed) {
      counts.set(pool, (counts.get(pool) ?? 0) + 1);
      this.setPool(pool, (this.pools.get(pool) ?? []).filter((v) => v.id !== id));
    }
    for (const [pool, count] of counts) this.deps.onPruned(pool, count);
  }

  private async insert(pool: string, version: Version): Promise<void> {
    let sealed: Buffer;
    try {
      sealed = this.deps.sealer!.seal(pool, version.id, version.value);
    } catch {
      throw apiError("secret_seal_failure", "the value could not be sealed; nothing was stored");
    }
    try {
      await this.deps.store.addRuntimeSecret({ pool, id: version.id, sealed, notBeforeMs: version.notBeforeMs, notAfterMs: version.notAfterMs, createdAtMs: version.createdAtMs });
    } catch (error) {
      if (error instanceof StoreError && error.code === "duplicate_id") throw apiError("secret_duplicate_id", `secret ${JSON.stringify(pool)} already has a version ${version.id}`);
      throw apiError("secret_persist_failure", "the version could not be stored; nothing was changed");
    }
    this.setPool(pool, [...(this.pools.get(pool) ?? []), version]);
  }

  /** A store failure while changing a pool: 500 secret_persist_failure (the catalogue's words), nothing changed. */
  private async persisting<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof StoreError) throw apiError("secret_persist_failure", "the secret store could not be read or written; nothing was changed");
      throw error;
    }
  }

  /** The pool named `name` if it can be managed: declared, runtime on, and a key to seal with. */
  private usablePool(config: SpoolConfig, name: string): NamedSecret {
    const pool = config.secrets.find((s) => s.id === name);
    if (!pool) throw apiError("secret_pool_not_found", `no secret ${JSON.stringify(name)} is declared in secrets { }`);
    if (!pool.runtime) throw apiError("secret_not_runtime", `secret ${JSON.stringify(name)} is not runtime on; its value comes from the Spoolfile`);
    if (!this.deps.sealer) throw apiError("secret_management_unavailable", `runtime secrets are unavailable: ${SECRET_KEY_VARIABLE} was not set when Spool started`);
    return pool;
  }

  private setPool(pool: string, versions: readonly Version[]): void {
    this.pools.set(pool, versions);
    this.resolved.set(
      pool,
      versions.map((v) => ({ value: v.value, validFromMs: v.notBeforeMs, validUntilMs: v.notAfterMs ?? undefined })),
    );
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.turn.then(work, work);
    this.turn = next.catch(() => undefined);
    return next;
  }
}

function runtimePoolIds(config: SpoolConfig): Set<string> {
  return new Set(config.secrets.filter((s) => s.runtime).map((s) => s.id));
}

function versionOf(row: RuntimeSecretRow, value: Buffer): Version {
  return { id: row.id, value, notBeforeMs: row.notBeforeMs, notAfterMs: row.notAfterMs, createdAtMs: row.createdAtMs };
}

function viewOf(version: Version, withCreated: boolean): VersionView {
  const view: VersionView = { id: version.id, not_before: rfc3339(version.notBeforeMs) };
  if (version.notAfterMs !== null) view.not_after = rfc3339(version.notAfterMs);
  if (withCreated) view.created_at = rfc3339(version.createdAtMs);
  return view;
}

/**
 * "Now" as a default not_before, down to the whole second: generic HMAC checks windows at the
 * sender's X-Timestamp, in whole seconds, so a version added at 12:00:00.400 must cover a request
 * signed at 12:00:00 right after it (docs/decisions.md D93).
 */
function wholeSecond(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}
