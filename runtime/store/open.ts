// openStore: the one entry point the runtime uses to get a Store for the configured backend.
import type { Clock } from "../time/clock.js";
import { startMaintenance } from "./maintenance.js";
import { openMemoryStore } from "./memory/store.js";
import { noopObserver, type StoreObserver } from "./observer.js";
import type { StoreOptions } from "./options.js";
import { openPostgresStore } from "./postgres/store.js";
import { openSqliteStore } from "./sqlite/store.js";
import { StoreError, type Store, type StoreBackend } from "./store.js";

export type StoreSpec = StoreOptions & {
  backend: StoreBackend;
  /** SQLite database file (default ./.data/spool.db is the CLI's business). */
  sqlitePath?: string;
  /** How long a write waits for another process's lock before failing `unavailable` (default 5000). */
  sqliteBusyTimeoutMs?: number;
  postgresDsn?: string;
  /** PostgreSQL schema to create and use (default "spool"). */
  postgresSchema?: string;
  /** PostgreSQL pool size (default 8). */
  postgresPoolSize?: number;
};

export interface StoreDeps {
  clock: Clock;
  observer?: StoreObserver;
  /** Failures of background pruning / sampling; default: ignored (they retry next interval). */
  onMaintenanceError?: (task: "prune" | "trend_sample", error: unknown) => void;
  /** PostgreSQL: the server's clock is this far ahead of `clock` (ms; negative: behind), past a tolerance. */
  onClockSkew?: (skewMs: number) => void;
}

export async function openStore(spec: StoreSpec, deps: StoreDeps): Promise<Store> {
  const observer = deps.observer ?? noopObserver;
  const store = await openBackend(spec, deps, observer);
  const stopMaintenance = startMaintenance(store, spec, deps.onMaintenanceError ?? (() => {}));
  const close = store.close.bind(store);
  store.close = async () => {
    stopMaintenance();
    await close();
  };
  return store;
}

async function openBackend(spec: StoreSpec, { clock, onClockSkew }: StoreDeps, observer: StoreObserver): Promise<Store> {
  switch (spec.backend) {
    case "memory":
      return openMemoryStore({ clock, observer, limits: spec });
    case "sqlite":
      if (!spec.sqlitePath) throw new StoreError("invalid_argument", "the sqlite backend needs sqlitePath");
      return openSqliteStore({ path: spec.sqlitePath, busyTimeoutMs: spec.sqliteBusyTimeoutMs ?? 5000, clock, observer, limits: spec });
    case "postgres":
      if (!spec.postgresDsn) throw new StoreError("invalid_argument", "the postgres backend needs postgresDsn");
      return openPostgresStore({
        dsn: spec.postgresDsn,
        schema: spec.postgresSchema ?? "spool",
        poolSize: spec.postgresPoolSize ?? 8,
        clock,
        observer,
        limits: spec,
        trendSampleIntervalMs: spec.trendSampleIntervalMs,
        onClockSkew,
      });
    default:
      throw new StoreError("invalid_argument", `unknown store backend ${String(spec.backend)}`);
  }
}

/**
 * The SQLite file of an instance opened by a tool beside it (the MCP server's queue tools,
 * docs/mcp.md): the file must exist, no pruning or trend sampling runs here (the instance does that),
 * and it is read-only unless `readOnly` is false.
 */
export function openSqliteBeside(spec: StoreSpec, clock: Clock, readOnly: boolean): Store {
  if (!spec.sqlitePath) throw new StoreError("invalid_argument", "the sqlite backend needs sqlitePath");
  return openSqliteStore({ path: spec.sqlitePath, busyTimeoutMs: spec.sqliteBusyTimeoutMs ?? 5000, clock, observer: noopObserver, limits: spec, readOnly });
}
