// Every spool_* metric family of docs/operations.md "Metrics",
// declared once. Code increments the typed handles returned here, never a metric looked up by name.
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { LabelledCounter, LabelledHistogram } from "./series.js";
import type { NowClock } from "../time/clock.js";
import { SnapshotCache } from "./snapshot-cache.js";

/** Bumped when a family is added, renamed or relabelled; dashboards gate on it (docs/operations.md "Metrics"). */
export const METRICS_SCHEMA_VERSION = "1.1.0";

export type StoreBackend = "sqlite" | "memory" | "postgres";

export interface QueueDepth {
  queued: number;
  leased: number;
  dead: number;
}

/** What the queue gauges show; the lead's provider computes it from Store.stats(). */
export interface QueueSnapshot {
  depth: QueueDepth;
  oldestQueuedAgeSeconds: number;
  readyLagSeconds: number;
  /** Active leases per route (pull routes). */
  leasesActiveByRoute: Readonly<Record<string, number>>;
  /** Memory backend only: what spool_store_memory_* gauges show. */
  memory?: MemoryStoreSnapshot;
}

export type MemoryItemState = "queued" | "leased" | "delivered" | "dead";

export interface MemoryStoreSnapshot {
  itemsByState: Readonly<Record<MemoryItemState, number>>;
  retainedBytesByState: Readonly<Record<MemoryItemState, number>>;
  retainedBytesTotal: number;
}

export interface MetricsOptions {
  backend: StoreBackend;
  /** `spool version` string; a leading "v" is dropped (docs/cli.md). */
  version: string;
  queueSnapshot: () => Promise<QueueSnapshot>;
  clock: NowClock;
  /** Queue gauges are at most this stale; 2 s by docs/decisions.md D32. */
  snapshotMaxAgeMs?: number;
  /** Called when the snapshot provider fails; the queue and memory gauges then read NaN and the lease gauge has no series. */
  onSnapshotError?: (error: unknown) => void;
}

const STORE_SECONDS_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const MEMORY_STATES: readonly MemoryItemState[] = ["queued", "leased", "delivered", "dead"];

export function createMetrics(options: MetricsOptions) {
  const registry = new Registry();
  const families = familyMakers(registry);
  const snapshots = new SnapshotCache(options.queueSnapshot, {
    maxAgeMs: options.snapshotMaxAgeMs ?? 2_000,
    clock: options.clock,
  });
  const snapshot: ReadSnapshot = () => snapshots.get(options.onSnapshotError);
  // Registered in this order, which is the order of the exposition.
  const queue = queueFamilies(families, snapshot);
  const ingress = ingressFamilies(families);
  const delivery = deliveryFamilies(families);
  const pull = pullFamilies(families, snapshot);
  const store = storeFamilies(families);
  // Backend-specific families exist only for the active backend: an absent series means
  // "not emitted", not zero (docs/operations.md "Metrics"; a memory-only config emits no sqlite family).
  const sqlite = options.backend === "sqlite" ? sqliteFamilies(families) : undefined;
  const memory = options.backend === "memory" ? memoryFamilies(families, snapshot) : undefined;
  const publish = publishFamilies(families);
  const tracing = tracingFamilies(families);
  const secrets = secretFamilies(families);
  infoFamilies(families, options.version);
  return { registry, backend: options.backend, queue, ingress, delivery, pull, store, sqlite, memory, publish, tracing, secrets };
}

type ReadSnapshot = () => Promise<QueueSnapshot | undefined>;

/** Counters and histograms registered in `registry`, and the registers list for the other kinds. */
function familyMakers(registry: Registry) {
  const registers = [registry];
  const counter = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Counter<L>({ name, help, labelNames, registers });
  const histogram = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Histogram<L>({ name, help, labelNames, buckets: STORE_SECONDS_BUCKETS, registers });
  return { registers, counter, histogram };
}

type Families = ReturnType<typeof familyMakers>;

function queueFamilies({ registers, counter }: Families, snapshot: ReadSnapshot) {
  const queue = {
    depth: new Gauge<"state">({
      name: "spool_queue_depth",
      help: "Messages in the queue by state (queued, leased, dead).",
      labelNames: ["state"],
      registers,
      async collect() {
        const depth = (await snapshot())?.depth;
        for (const state of ["queued", "leased", "dead"] as const) this.set({ state }, depth ? depth[state] : NaN);
      },
    }),
    total: new Gauge({
      name: "spool_queue_total",
      help: "Messages queued, leased or dead.",
      registers,
      async collect() {
        const depth = (await snapshot())?.depth;
        this.set(depth ? depth.queued + depth.leased + depth.dead : NaN);
      },
    }),
    oldestQueuedAgeSeconds: new Gauge({
      name: "spool_queue_oldest_queued_age_seconds",
      help: "Age of the oldest queued message.",
      registers,
      async collect() {
        this.set((await snapshot())?.oldestQueuedAgeSeconds ?? NaN);
      },
    }),
    dropped: counter("spool_queue_dropped_total", "Queued messages removed to make room at max_depth (queue_limits drop_policy drop_oldest)."),
    readyLagSeconds: new Gauge({
      name: "spool_queue_ready_lag_seconds",
      help: "How long the oldest ready message has waited past its next_run_at.",
      registers,
      async collect() {
        this.set((await snapshot())?.readyLagSeconds ?? NaN);
      },
    }),
  };
  return queue;
}

function ingressFamilies({ counter }: Families) {
  const ingress = {
    accepted: counter("spool_ingress_accepted_total", "Ingress requests accepted (202)."),
    rejected: counter("spool_ingress_rejected_total", "Ingress requests refused."),
    rejectedByReason: counter("spool_ingress_rejected_by_reason_total", "Ingress refusals by reason and HTTP status.", ["reason", "status"]),
    enqueued: counter("spool_ingress_enqueued_total", "Messages stored by ingress (one per fan-out copy)."),
    adaptiveBackpressure: counter("spool_ingress_adaptive_backpressure_total", "Adaptive backpressure trips by reason.", ["reason"]),
    adaptiveBackpressureApplied: counter("spool_ingress_adaptive_backpressure_applied_total", "Ingress requests refused by adaptive backpressure."),
  };
  // The refusals docs/operations.md "Metrics" names (memory_pressure, queue_full and
  // adaptive_backpressure, each 503 on ingress) are exported at 0 from the start, so an alert on
  // their rate has a series to read before the first refusal, as the reference exports them.
  for (const reason of ["memory_pressure", "queue_full", "adaptive_backpressure"]) ingress.rejectedByReason.inc({ reason, status: "503" }, 0);
  return ingress;
}

function deliveryFamilies({ counter }: Families) {
  const delivery = {
    attempts: counter("spool_delivery_attempts_total", "Push and exec delivery attempts."),
    acked: counter("spool_delivery_acked_total", "Deliveries acknowledged (2xx or exit 0)."),
    retry: counter("spool_delivery_retry_total", "Deliveries scheduled for retry."),
    dead: counter("spool_delivery_dead_total", "Messages moved to the dead-letter queue by a push/exec attempt or a Pull nack with dead."),
    deadByReason: counter("spool_delivery_dead_by_reason_total", "Messages moved to the dead-letter queue, by normalised reason.", ["reason"]),
  };
  return delivery;
}

function pullFamilies({ registers, counter }: Families, snapshot: ReadSnapshot) {
  const pull = {
    dequeue: counter("spool_pull_dequeue_total", "Pull dequeue requests by route and status class.", ["route", "status"]),
    acked: counter("spool_pull_acked_total", "Leases acknowledged.", ["route"]),
    nacked: counter("spool_pull_nacked_total", "Leases nacked.", ["route"]),
    ackConflict: counter("spool_pull_ack_conflict_total", "Acks refused with lease_conflict.", ["route"]),
    nackConflict: counter("spool_pull_nack_conflict_total", "Nacks refused with lease_conflict.", ["route"]),
    leaseExpired: counter("spool_pull_lease_expired_total", "Leases that expired before ack or nack.", ["route"]),
    sseConnections: counter("spool_pull_sse_connections_total", "SSE streams opened (answered 200).", ["route"]),
    sseMessagesSent: counter("spool_pull_sse_messages_sent_total", "Messages written to SSE streams.", ["route"]),
    sseConnectionActive: new Gauge<"route">({ name: "spool_pull_sse_connection_active", help: "SSE streams open now.", labelNames: ["route"], registers }),
    leaseActive: new Gauge<"route">({
      name: "spool_pull_lease_active",
      help: "Active leases by route.",
      labelNames: ["route"],
      registers,
      async collect() {
        const byRoute = (await snapshot())?.leasesActiveByRoute ?? {};
        this.reset(); // routes removed by a reload disappear instead of freezing at their last value
        for (const [route, count] of Object.entries(byRoute)) this.set({ route }, count);
      },
    }),
  };
  return pull;
}

function storeFamilies({ registers, counter }: Families) {
  // One observation per store call (each ingress request): families with series handles (series.ts).
  const store = {
    operationSeconds: new LabelledHistogram({
      name: "spool_store_operation_seconds",
      help: "Store operation latency.",
      labelNames: ["backend", "operation"],
      buckets: STORE_SECONDS_BUCKETS,
      registers,
    }),
    operations: new LabelledCounter({ name: "spool_store_operation_total", help: "Store operations.", labelNames: ["backend", "operation"], registers }),
    errors: counter("spool_store_errors_total", "Store operation failures.", ["backend", "operation", "kind"]),
  };
  return store;
}

function sqliteFamilies({ counter, histogram }: Families) {
  return {
    writeSeconds: histogram("spool_store_sqlite_write_seconds", "SQLite write transaction latency."),
    dequeueSeconds: histogram("spool_store_sqlite_dequeue_seconds", "SQLite dequeue latency."),
    checkpointSeconds: histogram("spool_store_sqlite_checkpoint_seconds", "SQLite WAL checkpoint latency."),
    busy: counter("spool_store_sqlite_busy_total", "SQLITE_BUSY results."),
    retry: counter("spool_store_sqlite_retry_total", "Retried SQLite transactions (0: writes wait inside busy_timeout instead; see spool_store_sqlite_busy_total)."),
    txCommit: counter("spool_store_sqlite_tx_commit_total", "Committed SQLite transactions."),
    txRollback: counter("spool_store_sqlite_tx_rollback_total", "Rolled back SQLite transactions."),
    checkpoint: counter("spool_store_sqlite_checkpoint_total", "WAL checkpoints run."),
    checkpointErrors: counter("spool_store_sqlite_checkpoint_errors_total", "WAL checkpoints that failed."),
  };
}

function memoryFamilies({ registers, counter }: Families, snapshot: ReadSnapshot) {
  const byState = (name: string, help: string, pick: (memory: MemoryStoreSnapshot) => Readonly<Record<MemoryItemState, number>>) =>
    new Gauge<"state">({
      name,
      help,
      labelNames: ["state"],
      registers,
      async collect() {
        const memory = (await snapshot())?.memory;
        for (const state of MEMORY_STATES) this.set({ state }, (memory && pick(memory)[state]) ?? NaN);
      },
    });
  return {
    items: byState("spool_store_memory_items", "Items held by the memory store by state.", (memory) => memory.itemsByState),
    retainedBytes: byState("spool_store_memory_retained_bytes", "Bytes retained by the memory store by state.", (memory) => memory.retainedBytesByState),
    retainedBytesTotal: new Gauge({
      name: "spool_store_memory_retained_bytes_total",
      help: "Bytes retained by the memory store.",
      registers,
      async collect() {
        this.set((await snapshot())?.memory?.retainedBytesTotal ?? NaN);
      },
    }),
    evictions: counter("spool_store_memory_evictions_total", "Items evicted by the memory store by reason.", ["reason"]),
  };
}

function publishFamilies({ counter }: Families) {
  const publish = {
    accepted: counter("spool_publish_accepted_total", "Messages published through the Admin API."),
    rejected: counter("spool_publish_rejected_total", "Publish requests refused."),
    rejectedValidation: counter("spool_publish_rejected_validation_total", "Publish refusals: invalid items."),
    rejectedPolicy: counter("spool_publish_rejected_policy_total", "Publish refusals: publish policy."),
    rejectedConflict: counter("spool_publish_rejected_conflict_total", "Publish refusals: duplicate ids."),
    rejectedQueueFull: counter("spool_publish_rejected_queue_full_total", "Publish refusals: queue full."),
    rejectedStore: counter("spool_publish_rejected_store_total", "Publish refusals: store failure."),
    scopedAccepted: counter("spool_publish_scoped_accepted_total", "Messages published through endpoint-scoped publish."),
    scopedRejected: counter("spool_publish_scoped_rejected_total", "Endpoint-scoped publish requests refused."),
  };
  return publish;
}

function secretFamilies({ counter }: Families) {
  return {
    gcPruned: counter("spool_runtime_secret_gc_pruned_total", "Expired runtime secret versions pruned, by pool.", ["pool"]),
  };
}

function tracingFamilies({ registers, counter }: Families) {
  const tracing = {
    enabled: new Gauge({ name: "spool_tracing_enabled", help: "1 when tracing is enabled.", registers }),
    initFailures: counter("spool_tracing_init_failures_total", "Tracing provider start failures."),
    exportErrors: counter("spool_tracing_export_errors_total", "Span export failures."),
    spansDropped: counter("spool_tracing_spans_dropped_total", "Spans dropped because the export queue was full."),
  };
  return tracing;
}

function infoFamilies({ registers }: Families, version: string): void {
  const buildInfo = new Gauge<"version">({ name: "spool_build_info", help: "Spool build information.", labelNames: ["version"], registers });
  buildInfo.set({ version: version.replace(/^v/, "") }, 1);
  const schemaInfo = new Gauge<"schema">({ name: "spool_metrics_schema_info", help: "Metrics schema version.", labelNames: ["schema"], registers });
  schemaInfo.set({ schema: METRICS_SCHEMA_VERSION }, 1);
}

export type SpoolMetrics = ReturnType<typeof createMetrics>;

/** Counts one ingress refusal in both the total and the by-reason family. */
export function recordIngressRejection(metrics: SpoolMetrics, reason: string, status: number): void {
  metrics.ingress.rejected.inc();
  metrics.ingress.rejectedByReason.inc({ reason, status: String(status) });
}

/** The `status` label of spool_pull_dequeue_total: 200 and 204 as-is, otherwise 4xx / 5xx. */
export function dequeueStatusLabel(status: number): string {
  if (status === 200 || status === 204) return String(status);
  return status >= 500 ? "5xx" : "4xx";
}

/** The `reason` label values of spool_delivery_dead_by_reason_total (docs/operations.md "Metrics"). */
export const DEAD_REASON_LABELS = ["max_retries", "no_retry", "policy_denied", "unspecified", "other"] as const;
export type DeadReasonLabel = (typeof DEAD_REASON_LABELS)[number];

/** Counts `count` messages moved to the DLQ with `reason` in spool_delivery_dead_total and the by-reason family. */
export function recordDead(delivery: SpoolMetrics["delivery"], reason: string | undefined | null, count = 1): void {
  if (count <= 0) return;
  delivery.dead.inc(count);
  delivery.deadByReason.inc({ reason: deadReasonLabel(reason) }, count);
}

/** Free-text dead reasons folded to the documented label values, so the label set stays bounded. */
export function deadReasonLabel(reason: string | undefined | null): DeadReasonLabel {
  if (reason === undefined || reason === null || reason.trim() === "") return "unspecified";
  if (reason === "max_retries" || reason === "no_retry" || reason === "policy_denied") return reason;
  return "other";
}

/** Times a store call into spool_store_operation_seconds/_total and counts failures by kind. */
export async function observeStoreOperation<T>(
  metrics: SpoolMetrics,
  operation: string,
  run: () => Promise<T>,
  errorKind: (error: unknown) => string = () => "error",
): Promise<T> {
  const labels = { backend: metrics.backend, operation };
  const stopTimer = metrics.store.operationSeconds.startTimer(labels);
  metrics.store.operations.inc(labels);
  try {
    return await run();
  } catch (error) {
    metrics.store.errors.inc({ ...labels, kind: errorKind(error) });
    throw error;
  } finally {
    stopTimer();
  }
}
