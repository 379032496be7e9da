// The Admin API mounted on the running app (what `spool run` plugs into the app's admin seam):
// its deps taken from the app, management writes compiled and reloaded, audit lines written with
// credentials masked. With front.ts (the admin token, /healthz) and health/, this folder is the
// whole Admin API.
import { compileSpoolfile, configFingerprint, renderDiagnostic, type CompileOptions } from "../../compiler/index.js";
import type { SpoolConfig } from "../../compiler/ir.js";
import type { Clock } from "../time/clock.js";
import type { RuntimeLogger } from "../observability/log.js";
import type { SpoolMetrics } from "../observability/metrics.js";
import { redactProse } from "../observability/redact.js";
import type { RuntimeSecrets } from "../secrets/pools.js";
import type { Store } from "../store/store.js";
import type { AuditRecord } from "./audit-record.js";
import { computeTrendSignals, healthTrendSignals } from "./diagnostics.js";
import type { TrendSignalsView } from "./health/details.js";
import { createAdminApi, type AdminApiHandler } from "./index.js";

/** What the Admin API reads from the running app (the app's context has all of it). */
export interface AdminHost {
  readonly store: Store;
  readonly secrets: RuntimeSecrets;
  readonly metrics: SpoolMetrics;
  readonly logger: RuntimeLogger;
  readonly clock: Clock;
  config(): SpoolConfig;
  reload(next: SpoolConfig, fingerprint: string | null): { applied: true } | { applied: false; changes: string[] };
}

export interface AdminMountOptions {
  /** The Spoolfile management PUT/DELETE rewrite. */
  readonly configPath: string;
  /** How a rewritten file is compiled before it is applied (the same options `spool run` loads with). */
  readonly compileOptions: CompileOptions;
  /** Where audit lines go (stderr by default: docs/decisions.md D29). */
  readonly writeAuditLine?: (line: string) => void;
}

export function mountAdminApi(host: AdminHost, options: AdminMountOptions): AdminApiHandler {
  const writeAuditLine = options.writeAuditLine ?? ((line: string) => process.stderr.write(line + "\n"));
  return createAdminApi({
    getConfig: () => host.config(),
    store: host.store,
    secrets: host.secrets,
    clock: host.clock,
    // Credentials typed into the free-text fields are masked, as in every log line; the words
    // around them are the audit trail and are kept.
    audit: (record) => writeAuditLine(JSON.stringify(withProseRedacted(record))),
    metrics: host.metrics,
    configPath: options.configPath,
    applyConfigText: async (text) => {
      const compiled = compileSpoolfile(text, options.configPath, options.compileOptions);
      if (!compiled.config) {
        // Whole: this answers an admin-token holder and is not logged (the audit line keeps the code only).
        const first = compiled.diagnostics.find((d) => d.severity === "error");
        return { ok: false, detail: first ? renderDiagnostic(first) : "the rewritten config does not compile" };
      }
      // The file now holds exactly `text` (written before this is called), so its fingerprint is the text's.
      const outcome = host.reload(compiled.config, configFingerprint(text));
      return outcome.applied ? { ok: true } : { ok: false, detail: `the change needs a restart: ${outcome.changes.join(", ")}` };
    },
    onUnexpectedError: (error) => host.logger.error("admin_unexpected_error", { error }),
  });
}

/** Trend signals for /healthz?details=1: the backlog analysis of the Admin API. */
export function adminTrendSignals(host: Pick<AdminHost, "store" | "clock" | "config">): () => Promise<TrendSignalsView> {
  return async () => healthTrendSignals(await computeTrendSignals(host.store, {}, host.config().defaults.trendSignals, host.clock.now()));
}

/**
 * The audit record with credentials masked in the fields its callers write: reason, actor, request
 * id, and the principal, which is the actor when one is sent.
 */
function withProseRedacted(record: AuditRecord): AuditRecord {
  const masked = { ...record, principal: redactProse(record.principal) };
  if (masked.reason !== undefined) masked.reason = redactProse(masked.reason);
  if (masked.actor !== undefined) masked.actor = redactProse(masked.actor);
  if (masked.request_id !== undefined) masked.request_id = redactProse(masked.request_id);
  return masked;
}
