// Applying a compiled config to the running app (docs/decisions.md D55): refused whole when a
// restart-only setting changed (policy.ts); otherwise the new per-config state is swapped in at
// once, the listeners take the new parser limit and re-read their certificates, and every service
// is told.
import type { SpoolConfig } from "../../compiler/ir.js";
import { listenerName, loadPlanTls, parserHeaderLimit, type RunningListener } from "../http/listeners.js";
import type { RuntimeLogger } from "../observability/log.js";
import { restartRequiredChanges } from "./policy.js";

export type ReloadOutcome =
  | { applied: true; generation: number }
  | { applied: false; reason: "restart_required"; changes: string[] };

/** What a reload changes in the running app. */
export interface ReloadTarget {
  /** The config serving now. */
  current(): SpoolConfig;
  /** Builds the per-config state of `next` and makes it current; returns its generation number. */
  swap(next: SpoolConfig, fingerprint: string | null): number;
  listeners(): readonly RunningListener[];
  services(): readonly { readonly name: string; reconfigure(config: SpoolConfig): void }[];
  logger: RuntimeLogger;
}

export function applyReload(target: ReloadTarget, next: SpoolConfig, fingerprint: string | null): ReloadOutcome {
  const { logger } = target;
  const changes = restartRequiredChanges(target.current(), next);
  if (changes.length > 0) {
    logger.warn("config_reloaded_restart_required", { changes, detail: "these settings take effect after a restart; the running config is unchanged" });
    return { applied: false, reason: "restart_required", changes };
  }
  const generation = target.swap(next, fingerprint);
  refreshListeners(target.listeners(), next, logger);
  for (const service of target.services()) {
    try {
      service.reconfigure(next);
    } catch (error) {
      logger.error("service_reconfigure_failed", { service: service.name, error });
    }
  }
  logger.info("config_reloaded", { generation, routes: next.routes.length });
  return { applied: true, generation };
}

function refreshListeners(listeners: readonly RunningListener[], next: SpoolConfig, logger: RuntimeLogger): void {
  // Node reads a server's maxHeaderSize when a connection opens: new connections get the limit
  // the new routes need (a raised max_headers must not stay capped by the old parser limit).
  for (const { listener } of listeners) listener.setMaxHeaderSize(parserHeaderLimit(next));
  // The tls blocks are unchanged (a change needs a restart), but their files are read again, as
  // secrets from file: sources are: a renewed certificate is served from this reload on.
  for (const { plan, listener } of listeners) {
    if (!plan.tls) continue;
    try {
      listener.refreshTls(loadPlanTls(plan.tls, plan));
    } catch (error) {
      logger.warn("tls_reload_failed", { listener: listenerName(plan), error, detail: "the certificate read at the last start or reload is still served" });
    }
  }
}
