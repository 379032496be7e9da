// The body of GET /healthz?details=1 (docs/api.md "Admin API",
// docs/operations.md "Health"): queue diagnostics from the cached stats, ingress, delivery and tracing counters, the memory
// store's footprint, and the config generation so deploy tooling can confirm a reload.
import type { MemoryStoreStats, QueuedBucket, QueueStats } from "../../store/reports.js";
import { DEAD_REASON_LABELS, type DeadReasonLabel, type SpoolMetrics } from "../../observability/metrics.js";

export interface TrendSignalsView {
  signals: unknown[];
  operator_actions: unknown[];
}

export interface ConfigIdentity {
  /** sha256 (hex) of the config file serving, null when the config did not come from a file. */
  fingerprint: string | null;
  generation: number;
  loadedAtMs: number;
}

export interface HealthInputs {
  nowMs: number;
  /** The cached queue stats, or the error that kept them from loading. */
  queue: { ok: true; stats: QueueStats } | { ok: false; error: string };
  metrics: SpoolMetrics;
  memory: MemoryStoreStats | null;
  trendSignals: TrendSignalsView;
  config: ConfigIdentity;
}

const INGRESS_REASON_KEYS = ["memory_pressure", "queue_full", "adaptive_backpressure"];
const BACKPRESSURE_REASON_KEYS = ["queued_pressure", "ready_lag", "oldest_queued_age", "sustained_growth"];

export async function healthDetails(inputs: HealthInputs): Promise<{ ok: boolean; time: string; diagnostics: Record<string, unknown> }> {
  const diagnostics: Record<string, unknown> = {
    queue: inputs.queue.ok ? queueDiagnostics(inputs.queue.stats, inputs.nowMs, inputs.trendSignals) : { ok: false, error: inputs.queue.error },
    ingress: await ingressDiagnostics(inputs.metrics),
    delivery: await deliveryDiagnostics(inputs.metrics),
    tracing: await tracingDiagnostics(inputs.metrics),
    config: { fingerprint: inputs.config.fingerprint, generation: inputs.config.generation, loaded_at: iso(inputs.config.loadedAtMs) },
  };
  if (inputs.memory) diagnostics.store = memoryDiagnostics(inputs.memory);
  return { ok: inputs.queue.ok, time: iso(inputs.nowMs), diagnostics };
}

function queueDiagnostics(stats: QueueStats, nowMs: number, trendSignals: TrendSignalsView): Record<string, unknown> {
  return {
    total: stats.total,
    by_state: { queued: stats.byState.queued, leased: stats.byState.leased, dead: stats.byState.dead },
    oldest_queued_received_at: isoOrNull(stats.oldestQueuedReceivedAtMs),
    oldest_queued_age_seconds: secondsOrNull(stats.oldestQueuedAgeMs),
    earliest_queued_next_run_at: isoOrNull(stats.earliestQueuedNextRunAtMs),
    ready_lag_seconds: secondsOrNull(stats.readyLagMs),
    top_queued: stats.topQueued.map((bucket) => bucketView(bucket, nowMs)),
    trend_signals: trendSignals,
  };
}

function bucketView(bucket: QueuedBucket, nowMs: number): Record<string, unknown> {
  return {
    route: bucket.route,
    target: bucket.target,
    queued: bucket.queued,
    oldest_queued_received_at: iso(bucket.oldestQueuedReceivedAtMs),
    oldest_queued_age_seconds: Math.max(0, nowMs - bucket.oldestQueuedReceivedAtMs) / 1000,
    earliest_queued_next_run_at: iso(bucket.earliestQueuedNextRunAtMs),
    ready_lag_seconds: Math.max(0, nowMs - bucket.earliestQueuedNextRunAtMs) / 1000,
  };
}

async function ingressDiagnostics(metrics: SpoolMetrics): Promise<Record<string, unknown>> {
  const rejectedByReason: Record<string, number> = Object.fromEntries(INGRESS_REASON_KEYS.map((k) => [k, 0]));
  for (const value of (await metrics.ingress.rejectedByReason.get()).values) {
    const reason = String(value.labels.reason);
    rejectedByReason[reason] = (rejectedByReason[reason] ?? 0) + value.value;
  }
  const backpressureByReason: Record<string, number> = Object.fromEntries(BACKPRESSURE_REASON_KEYS.map((k) => [k, 0]));
  for (const value of (await metrics.ingress.adaptiveBackpressure.get()).values) {
    const reason = String(value.labels.reason);
    backpressureByReason[reason] = (backpressureByReason[reason] ?? 0) + value.value;
  }
  return {
    accepted_total: await counterTotal(metrics.ingress.accepted),
    rejected_total: await counterTotal(metrics.ingress.rejected),
    rejected_by_reason: rejectedByReason,
    enqueued_total: await counterTotal(metrics.ingress.enqueued),
    adaptive_backpressure_applied_total: await counterTotal(metrics.ingress.adaptiveBackpressureApplied),
    adaptive_backpressure_by_reason: backpressureByReason,
  };
}

/** The tracing counters (docs/api.md "Admin API"): whether tracing runs, and how often it failed to start or export. */
export async function tracingDiagnostics(metrics: SpoolMetrics): Promise<Record<string, unknown>> {
  const enabled = (await metrics.tracing.enabled.get()).values.some((value) => value.value === 1);
  return {
    enabled,
    init_failures_total: await counterTotal(metrics.tracing.initFailures),
    export_errors_total: await counterTotal(metrics.tracing.exportErrors),
    spans_dropped_total: await counterTotal(metrics.tracing.spansDropped),
  };
}

async function deliveryDiagnostics(metrics: SpoolMetrics): Promise<Record<string, unknown>> {
  const { delivery } = metrics;
  return {
    attempts_total: await counterTotal(delivery.attempts),
    acked_total: await counterTotal(delivery.acked),
    retry_total: await counterTotal(delivery.retry),
    dead_total: await counterTotal(delivery.dead),
    dead_by_reason: await deadByReason(metrics),
  };
}

/**
 * spool_delivery_dead_by_reason_total by label, every label present (zeros included) so dashboards
 * need no special case.
 */
export async function deadByReason(metrics: Pick<SpoolMetrics, "delivery">): Promise<Record<DeadReasonLabel, number>> {
  const counts = Object.fromEntries(DEAD_REASON_LABELS.map((label) => [label, 0])) as Record<DeadReasonLabel, number>;
  for (const value of (await metrics.delivery.deadByReason.get()).values) {
    const label = value.labels.reason as DeadReasonLabel | undefined;
    if (label !== undefined && Object.hasOwn(counts, label)) counts[label] += value.value;
  }
  return counts;
}

function memoryDiagnostics(memory: MemoryStoreStats): Record<string, unknown> {
  const { queued, leased, delivered, dead } = memory.itemsByState;
  return {
    backend: "memory",
    items_by_state: { queued, leased, delivered, dead },
    retained_bytes_total: memory.retainedBytesTotal,
    memory_pressure: {
      active: memory.memoryPressure.active,
      reason: memory.memoryPressure.reason,
      retained_item_limit: memory.memoryPressure.retainedItemLimit,
      retained_bytes_limit: memory.memoryPressure.retainedBytesLimit,
      rejected_total: memory.memoryPressure.rejectedTotal,
    },
  };
}

async function counterTotal(counter: { get(): Promise<{ values: { value: number }[] }> }): Promise<number> {
  return (await counter.get()).values.reduce((sum, v) => sum + v.value, 0);
}

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));
const secondsOrNull = (ms: number | null) => (ms === null ? null : ms / 1000);
