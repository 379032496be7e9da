// What the Admin API needs from the running app, passed in explicitly so tests can mount it on a
// bare node:http server with a real store and a temp Spoolfile.
import type { SpoolConfig } from "../../compiler/ir.js";
import type { Clock } from "../time/clock.js";
import type { SpoolMetrics } from "../observability/metrics.js";
import type { RuntimeSecrets } from "../secrets/pools.js";
import type { Store } from "../store/store.js";
import type { AuditRecord } from "./audit-record.js";

export type ApplyConfigOutcome = { ok: true } | { ok: false; detail: string };

export interface AdminDeps {
  /** The config currently serving; read per request so a reload is seen by the next request. */
  getConfig(): SpoolConfig;
  store: Store;
  /** The runtime secret pools (docs/secrets.md); absent where the app has none (503 secret_management_unavailable). */
  secrets?: RuntimeSecrets;
  clock: Clock;
  /** Writes one audit record as one JSON line (stderr or the runtime log: the app decides). */
  audit(record: AuditRecord): void;
  /** Publish counters (spool_publish_*); absent when metrics are off. */
  metrics?: Pick<SpoolMetrics, "publish">;
  /** The Spoolfile management PUT/DELETE rewrite. */
  configPath: string;
  /**
   * Compiles `text` and reloads the app with it; resolves once the new config serves (so a PUT's
   * change is live when its response is sent) or with the reason it was refused.
   */
  applyConfigText(text: string): Promise<ApplyConfigOutcome>;
  /** Failures that are not API errors (answered 500 internal_error): for the runtime log. */
  onUnexpectedError?(error: unknown): void;
  /** Largest admin request body; default 64 MiB (a publish batch of 1000 items). */
  maxBodyBytes?: number;
}

export const DEFAULT_ADMIN_MAX_BODY_BYTES = 64 * 1024 * 1024;
