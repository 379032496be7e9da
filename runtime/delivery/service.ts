// The delivery service `spool run` owns: the dispatcher fed from the IR, draining the real Store,
// counted in spool_delivery_* and logged. Start it after the store opens, reconfigure it on every
// reload, stop it before the store closes.
import type { SpoolConfig } from "../../compiler/ir.js";
import { redactUrl } from "../../compiler/url-redact.js";
import type { Clock } from "../time/clock.js";
import { recordDead, type SpoolMetrics } from "../observability/metrics.js";
import type { LogFields, RuntimeLogger } from "../observability/log.js";
import type { Store } from "../store/store.js";
import { createDispatcher, type AttemptEvent, type DeliveryDispatcher, type DispatcherDeps, type StopReport } from "./dispatcher.js";
import { dispatcherConfigFromIr } from "./from-ir.js";
import { storeDeliveryQueue } from "./store-queue.js";

export type DeliveryCounters = SpoolMetrics["delivery"];

export interface DeliveryServiceDeps {
  readonly store: Store;
  readonly clock: Clock;
  /** Read on every attempt, so metrics created (or recreated) after the service still count. */
  readonly getMetrics?: () => DeliveryCounters | undefined;
  readonly log?: RuntimeLogger;
  /** waitReady's fallback tick (default 1 s): how late a delayed retry may start at most. */
  readonly fallbackTickMs?: number;
  /** A CLIENT span per push attempt (runtime/tracing); absent: nothing traced. */
  readonly tracing?: DispatcherDeps["tracing"];
  /** Passed through to the dispatcher (tests: fixed random, fake DNS). */
  readonly dispatcher?: Pick<DispatcherDeps, "random" | "resolveHost" | "createAgent" | "storeRetryMs">;
}

export interface DeliveryService {
  /** Builds the dispatcher from the IR and starts draining its deliver routes. Throws on a config the dispatcher refuses. */
  start(config: SpoolConfig): void;
  /**
   * Applies a reloaded config: new, changed and removed targets, headers, signing, retry, egress.
   * Running deliveries finish on their old settings. Throws (and changes nothing) when the config
   * is refused, e.g. a malformed signing key.
   */
  reconfigure(config: SpoolConfig): void;
  /** Stops leasing, waits up to drainMs for running deliveries; the rest stay leased until their lease expires. */
  stop(options: { drainMs: number }): Promise<StopReport>;
  /** Deliveries running now (health and shutdown logs). */
  inFlight(): { total: number; byTarget: Record<string, number> };
}

export function createDeliveryService(deps: DeliveryServiceDeps): DeliveryService {
  const log = deps.log?.child({ component: "delivery" });
  let dispatcher: DeliveryDispatcher | undefined;
  let stopped = false;

  const queue = storeDeliveryQueue(deps.store, deps.clock, {
    fallbackTickMs: deps.fallbackTickMs,
    // lease_expired: the lease ran out and the message went back to the queue (it is delivered again);
    // lease_not_found: an operator canceled, requeued or deleted it meanwhile, or it was leased again.
    onLeaseConflict: (conflicts, operation) =>
      log?.warn("delivery settled after its lease was gone", {
        operation,
        lease_expired: conflicts.filter((c) => c.reason === "lease_expired").length,
        lease_not_found: conflicts.filter((c) => c.reason === "lease_not_found").length,
      }),
  });

  function count(event: AttemptEvent): void {
    const metrics = deps.getMetrics?.();
    if (!metrics) return;
    metrics.attempts.inc();
    if (event.outcome === "acked") metrics.acked.inc();
    else if (event.outcome === "retry") metrics.retry.inc();
    else recordDead(metrics, event.deadReason);
  }

  function logAttempt(event: AttemptEvent): void {
    if (!log) return;
    if (event.outcome === "retry" && log.enabled("info")) log.info("delivery_retry", retryFields(event));
    else if (event.outcome === "dead" && log.enabled("warn")) log.warn("delivery_dead", deadFields(event));
    if (!log.enabled("debug")) return;
    log.debug("delivery attempt", {
      route: event.route,
      target: redactUrl(event.writtenTarget),
      event_id: event.eventId,
      attempt: event.attempt,
      outcome: event.outcome,
      ...failureFields(event),
      ...(event.deadReason !== undefined ? { dead_reason: event.deadReason } : {}),
      duration_ms: event.durationMs,
      // Exec output is bounded by the deliverer; stdout is for debugging a program, never above debug.
      ...(event.output ? { stdout: event.output.stdout, stderr: event.output.stderr, output_truncated: event.output.truncated } : {}),
    });
  }

  return {
    start(config) {
      if (dispatcher) throw new Error("delivery service already started");
      if (stopped) throw new Error("delivery service was stopped");
      dispatcher = createDispatcher(dispatcherConfigFromIr(config), {
        ...deps.dispatcher,
        queue,
        clock: deps.clock,
        ...(deps.tracing ? { tracing: deps.tracing } : {}),
        observer: {
          onAttempt(event) {
            count(event);
            logAttempt(event);
          },
          onError(error, context) {
            log?.warn("delivery loop error", { route: context.route, target: redactUrl(context.writtenTarget), operation: context.operation, error: redactUrl(error instanceof Error ? error.message : String(error)) });
          },
        },
      });
      dispatcher.start();
    },

    reconfigure(config) {
      if (!dispatcher || stopped) throw new Error("delivery service is not running");
      dispatcher.reconfigure(dispatcherConfigFromIr(config));
    },

    async stop({ drainMs }) {
      stopped = true;
      if (!dispatcher) return { abandoned: 0 };
      const report = await dispatcher.stop({ drainMs });
      if (report.abandoned > 0) log?.warn("delivery drain budget ran out; leases expire on their own", { abandoned: report.abandoned });
      return report;
    },

    inFlight() {
      return dispatcher?.inFlight() ?? { total: 0, byTarget: {} };
    },
  };
}

/** How much of a failed program's stderr a retry or dead line carries. */
const LOGGED_STDERR_BYTES = 2048;

/** One line per retry (info): which message is retried, why, and when it is due again. */
function retryFields(event: AttemptEvent): LogFields {
  return {
    route: event.route,
    target: redactUrl(event.writtenTarget),
    event_id: event.eventId,
    attempt: event.attempt,
    ...failureFields(event),
    ...(event.nextAttemptAtMs !== undefined ? { next_attempt_at: new Date(event.nextAttemptAtMs).toISOString() } : {}),
    ...stderrFields(event),
  };
}

/** One line per message that went dead (warn): after how many attempts, why, and its last error or status. */
function deadFields(event: AttemptEvent): LogFields {
  return {
    route: event.route,
    target: redactUrl(event.writtenTarget),
    event_id: event.eventId,
    attempts: event.attempt,
    dead_reason: event.deadReason,
    ...failureFields(event),
    ...stderrFields(event),
  };
}

/** The attempt's status and error; a URL the error quotes (a redirect location) shows no password or query values. */
function failureFields(event: AttemptEvent): LogFields {
  return {
    ...(event.statusCode !== undefined ? { status_code: event.statusCode } : {}),
    ...(event.error !== undefined ? { error: redactUrl(event.error) } : {}),
  };
}

/** A failed program's stderr, its first LOGGED_STDERR_BYTES, as one field (never as lines of the log). */
function stderrFields(event: AttemptEvent): LogFields {
  const stderr = event.output?.stderr;
  if (!stderr) return {};
  const bytes = Buffer.from(stderr, "utf8");
  if (bytes.length <= LOGGED_STDERR_BYTES) return { stderr };
  return { stderr: bytes.subarray(0, LOGGED_STDERR_BYTES).toString("utf8"), stderr_truncated: true };
}
