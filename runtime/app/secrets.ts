// The start step that builds the runtime secret pools (docs/secrets.md) on the opened store: the
// sealer from the key `spool run` read, the prune counter, the PostgreSQL refresh, the warnings.
import { SECRET_KEY_VARIABLE } from "../../compiler/index.js";
import type { SpoolConfig } from "../../compiler/ir.js";
import type { RuntimeLogger } from "../observability/log.js";
import type { SpoolMetrics } from "../observability/metrics.js";
import { POSTGRES_REFRESH_INTERVAL_MS, RuntimeSecrets } from "../secrets/pools.js";
import { Sealer } from "../secrets/seal.js";
import type { Store } from "../store/store.js";
import type { Clock } from "../time/clock.js";

export async function startRuntimeSecrets(config: SpoolConfig, store: Store, key: Buffer | null, clock: Clock, metrics: SpoolMetrics, logger: RuntimeLogger): Promise<RuntimeSecrets> {
  const secrets = new RuntimeSecrets({
    store,
    sealer: key ? new Sealer(key) : null,
    clock,
    onPruned: (pool, count) => metrics.secrets.gcPruned.inc({ pool }, count),
    onError: (task, error) => logger.warn("runtime_secrets_failed", { task, error }),
    // Instances sharing a PostgreSQL schema see each other's versions within this (docs/decisions.md D94).
    refreshIntervalMs: store.backend === "postgres" ? POSTGRES_REFRESH_INTERVAL_MS : 0,
  });
  const runtimePools = config.secrets.filter((s) => s.runtime).map((s) => s.id);
  if (runtimePools.length > 0 && !key) {
    logger.warn("runtime_secrets_unavailable", { pools: runtimePools, detail: `${SECRET_KEY_VARIABLE} is not set: the runtime pools have no versions and the Admin API answers 503` });
  }
  if (runtimePools.length > 0 && store.backend === "memory") {
    logger.warn("runtime_secrets_memory_only", { pools: runtimePools, detail: "the memory backend keeps runtime secret versions until the process exits" });
  }
  await secrets.start(config);
  return secrets;
}
