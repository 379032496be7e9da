// The parts `spool run` mounts on the app's seams: the Admin API behind the admin token, the
// push/exec delivery service, and the trend signals of /healthz?details=1.
import { compileSpoolfile, configFingerprint, type CompileOptions, renderDiagnostic } from "../compiler/index.js";
import { computeTrendSignals, createAdminApi, healthTrendSignals, type AuditRecord } from "./admin/index.js";
import type { AppContext, AppDeps, AppService } from "./app.js";
import { createDeliveryService } from "./delivery/service.js";
import { redactProse } from "./observability/redact.js";

export interface ExtensionOptions {
  /** The Spoolfile management PUT/DELETE rewrite. */
  readonly configPath: string;
  /** How a rewritten file is compiled before it is applied (the same options `spool run` loads with). */
  readonly compileOptions: CompileOptions;
  /** Where audit lines go (stderr by default: docs/decisions.md D29). */
  readonly writeAuditLine?: (line: string) => void;
}

export function spoolExtensions(options: ExtensionOptions): Pick<AppDeps, "admin" | "services" | "trendSignals"> {
  const writeAuditLine = options.writeAuditLine ?? ((line: string) => process.stderr.write(line + "\n"));
  return {
    admin: (context: AppContext) =>
      createAdminApi({
        getConfig: () => context.config(),
        store: context.store,
        clock: context.clock,
        // Credentials typed into the free-text fields are masked, as in every log line; the words
        // around them are the audit trail and are kept.
        audit: (record) => writeAuditLine(JSON.stringify(withProseRedacted(record))),
        metrics: context.metrics,
        configPath: options.configPath,
        applyConfigText: async (text) => {
          const compiled = compileSpoolfile(text, options.configPath, options.compileOptions);
          if (!compiled.config) {
            // Whole: this answers an admin-token holder and is not logged (the audit line keeps the code only).
            const first = compiled.diagnostics.find((d) => d.severity === "error");
            return { ok: false, detail: first ? renderDiagnostic(first) : "the rewritten config does not compile" };
          }
          // The file now holds exactly `text` (written before this is called), so its fingerprint is the text's.
          const outcome = context.reload(compiled.config, configFingerprint(text));
          return outcome.applied ? { ok: true } : { ok: false, detail: `the change needs a restart: ${outcome.changes.join(", ")}` };
        },
        onUnexpectedError: (error) => context.logger.error("admin_unexpected_error", { error }),
      }),
    services: [(context: AppContext) => deliveryService(context)],
    trendSignals: (context: AppContext) => async () =>
      healthTrendSignals(await computeTrendSignals(context.store, {}, context.config().defaults.trendSignals, context.clock.now())),
  };
}

function deliveryService(context: AppContext): AppService {
  const service = createDeliveryService({ store: context.store, clock: context.clock, getMetrics: () => context.metrics.delivery, log: context.logger });
  return {
    name: "delivery",
    start: () => service.start(context.config()),
    reconfigure: (config) => {
      try {
        service.reconfigure(config);
      } catch (error) {
        // The dispatcher refused the new targets; it keeps delivering with the previous ones.
        context.logger.error("delivery_reconfigure_failed", { error });
      }
    },
    stop: async (drainMs) => {
      await service.stop({ drainMs });
    },
  };
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
