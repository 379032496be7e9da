import { Counter, Histogram, Registry } from "prom-client";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createHttpServer } from "../../runtime/http/server.js";
import { metricsHandler } from "../../runtime/observability/metrics-endpoint.js";
import {
  createMetrics,
  deadReasonLabel,
  dequeueStatusLabel,
  METRICS_SCHEMA_VERSION,
  observeStoreOperation,
  recordIngressRejection,
  type QueueSnapshot,
  type StoreBackend,
} from "../../runtime/observability/metrics.js";
import { LabelledCounter, LabelledHistogram } from "../../runtime/observability/series.js";

function testClock(startMs = 1_000_000) {
  let current = startMs;
  return { now: () => current, advance: (ms: number) => (current += ms) };
}

const baseSnapshot: QueueSnapshot = {
  depth: { queued: 3, leased: 1, dead: 0 },
  oldestQueuedAgeSeconds: 42,
  readyLagSeconds: 7,
  leasesActiveByRoute: { "/github": 1 },
  memory: {
    itemsByState: { queued: 3, leased: 1, delivered: 2, dead: 0 },
    retainedBytesByState: { queued: 300, leased: 100, delivered: 200, dead: 0 },
    retainedBytesTotal: 600,
  },
};

function metricsFor(backend: StoreBackend, provider: () => Promise<QueueSnapshot> = async () => baseSnapshot, clock = testClock()) {
  return createMetrics({ backend, version: "v0.1.0", queueSnapshot: provider, clock });
}

const COMMON_FAMILIES = [
  "spool_queue_depth",
  "spool_queue_total",
  "spool_queue_oldest_queued_age_seconds",
  "spool_queue_ready_lag_seconds",
  "spool_ingress_accepted_total",
  "spool_ingress_rejected_total",
  "spool_ingress_rejected_by_reason_total",
  "spool_ingress_enqueued_total",
  "spool_ingress_adaptive_backpressure_total",
  "spool_ingress_adaptive_backpressure_applied_total",
  "spool_delivery_attempts_total",
  "spool_delivery_acked_total",
  "spool_delivery_retry_total",
  "spool_delivery_dead_total",
  "spool_delivery_dead_by_reason_total",
  "spool_pull_dequeue_total",
  "spool_pull_acked_total",
  "spool_pull_nacked_total",
  "spool_pull_ack_conflict_total",
  "spool_pull_nack_conflict_total",
  "spool_pull_lease_expired_total",
  "spool_pull_lease_active",
  "spool_pull_sse_connections_total",
  "spool_pull_sse_messages_sent_total",
  "spool_pull_sse_connection_active",
  "spool_store_operation_seconds",
  "spool_store_operation_total",
  "spool_store_errors_total",
  "spool_publish_accepted_total",
  "spool_publish_rejected_total",
  "spool_publish_rejected_validation_total",
  "spool_publish_rejected_policy_total",
  "spool_publish_rejected_conflict_total",
  "spool_publish_rejected_queue_full_total",
  "spool_publish_rejected_store_total",
  "spool_publish_scoped_accepted_total",
  "spool_publish_scoped_rejected_total",
  "spool_tracing_enabled",
  "spool_tracing_init_failures_total",
  "spool_tracing_export_errors_total",
  "spool_runtime_secret_gc_pruned_total",
  "spool_tracing_spans_dropped_total",
  "spool_build_info",
  "spool_metrics_schema_info",
];
const SQLITE_FAMILIES = [
  "spool_store_sqlite_write_seconds",
  "spool_store_sqlite_dequeue_seconds",
  "spool_store_sqlite_checkpoint_seconds",
  "spool_store_sqlite_busy_total",
  "spool_store_sqlite_retry_total",
  "spool_store_sqlite_tx_commit_total",
  "spool_store_sqlite_tx_rollback_total",
  "spool_store_sqlite_checkpoint_total",
  "spool_store_sqlite_checkpoint_errors_total",
];
const MEMORY_FAMILIES = ["spool_store_memory_items", "spool_store_memory_retained_bytes", "spool_store_memory_retained_bytes_total", "spool_store_memory_evictions_total"];

const families = (text: string) => new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));

const exposition = suite("metrics exposition");

exposition("sqlite declares every common family and the sqlite ones, no memory ones", async () => {
  const found = families(await metricsFor("sqlite").registry.metrics());
  for (const name of [...COMMON_FAMILIES, ...SQLITE_FAMILIES]) assert.ok(found.has(name), name);
  for (const name of MEMORY_FAMILIES) assert.not.ok(found.has(name), name);
  assert.not.ok([...found].some((name) => name.startsWith("spool_store_memory_")));
});

exposition("memory declares the memory families and no sqlite family", async () => {
  const text = await metricsFor("memory").registry.metrics();
  const found = families(text);
  for (const name of [...COMMON_FAMILIES, ...MEMORY_FAMILIES]) assert.ok(found.has(name), name);
  assert.not.match(text, /spool_store_sqlite_/);
  assert.match(text, /^spool_store_memory_items\{state="delivered"\} 2$/m);
  assert.match(text, /^spool_store_memory_retained_bytes_total 600$/m);
});

exposition("postgres has neither backend-specific family", async () => {
  const text = await metricsFor("postgres").registry.metrics();
  assert.not.match(text, /spool_store_sqlite_|spool_store_memory_/);
});

exposition("build and schema info are 1; the version label drops a leading v", async () => {
  const text = await metricsFor("sqlite").registry.metrics();
  assert.match(text, /^spool_build_info\{version="0\.1\.0"\} 1$/m);
  assert.match(text, new RegExp(`^spool_metrics_schema_info\\{schema="${METRICS_SCHEMA_VERSION.replace(/\./g, "\\.")}"\\} 1$`, "m"));
  assert.match(METRICS_SCHEMA_VERSION, /^\d+\.\d+\.\d+$/);
});

exposition("queue gauges come from the snapshot, with zeros for every depth state", async () => {
  const text = await metricsFor("sqlite").registry.metrics();
  assert.match(text, /^# TYPE spool_queue_depth gauge$/m);
  assert.match(text, /^spool_queue_depth\{state="queued"\} 3$/m);
  assert.match(text, /^spool_queue_depth\{state="leased"\} 1$/m);
  assert.match(text, /^spool_queue_depth\{state="dead"\} 0$/m);
  assert.match(text, /^spool_queue_total 4$/m);
  assert.match(text, /^spool_queue_oldest_queued_age_seconds 42$/m);
  assert.match(text, /^spool_queue_ready_lag_seconds 7$/m);
  assert.match(text, /^spool_pull_lease_active\{route="\/github"\} 1$/m);
});

exposition("one scrape makes one snapshot call, which is reused for 2 s and then refreshed", async () => {
  const clock = testClock();
  let calls = 0;
  let snapshot = baseSnapshot;
  const metrics = metricsFor("memory", async () => {
    calls++;
    return snapshot;
  }, clock);
  await metrics.registry.metrics();
  assert.is(calls, 1);
  snapshot = { ...baseSnapshot, depth: { queued: 9, leased: 0, dead: 2 }, leasesActiveByRoute: { "/stripe": 4 } };
  clock.advance(2_000);
  let text = await metrics.registry.metrics();
  assert.is(calls, 1, "still fresh at exactly 2 s");
  assert.match(text, /^spool_queue_depth\{state="queued"\} 3$/m);
  clock.advance(1);
  text = await metrics.registry.metrics();
  assert.is(calls, 2);
  assert.match(text, /^spool_queue_depth\{state="queued"\} 9$/m);
  assert.match(text, /^spool_pull_lease_active\{route="\/stripe"\} 4$/m);
  assert.not.match(text, /route="\/github"/, "a route gone from the snapshot is no longer emitted");
});

exposition("a failing snapshot is reported and the queue gauges read NaN, not the last values", async () => {
  const clock = testClock();
  let fail = false;
  const errors: unknown[] = [];
  const metrics = createMetrics({
    backend: "sqlite",
    version: "0.1.0",
    clock,
    queueSnapshot: async () => {
      if (fail) throw new Error("database is locked");
      return baseSnapshot;
    },
    onSnapshotError: (error) => errors.push(error),
  });
  await metrics.registry.metrics();
  fail = true;
  clock.advance(5_000);
  const text = await metrics.registry.metrics();
  assert.match(text, /^spool_queue_depth\{state="queued"\} nan$/im);
  assert.match(text, /^spool_queue_oldest_queued_age_seconds nan$/im);
  assert.is(errors.length, 1);
  fail = false;
  clock.advance(5_000);
  assert.match(await metrics.registry.metrics(), /^spool_queue_depth\{state="queued"\} 3$/m, "back once the store answers");
});

const handles = suite("metric handles");

handles("the refusals the spec names are exported at 0 before the first one", async () => {
  for (const backend of ["sqlite", "memory", "postgres"] as const) {
    const text = await metricsFor(backend).registry.metrics();
    for (const reason of ["memory_pressure", "queue_full", "adaptive_backpressure"]) {
      assert.match(text, new RegExp(`^spool_ingress_rejected_by_reason_total\\{reason="${reason}",status="503"\\} 0$`, "m"), `${backend}: ${reason}`);
    }
  }
});

handles("typed handles and helpers count what they say", async () => {
  const metrics = metricsFor("sqlite");
  metrics.ingress.accepted.inc();
  recordIngressRejection(metrics, "queue_full", 503);
  recordIngressRejection(metrics, "auth", 401);
  metrics.pull.dequeue.inc({ route: "/github", status: dequeueStatusLabel(200) });
  metrics.delivery.deadByReason.inc({ reason: deadReasonLabel("receiver said no") });
  metrics.sqlite!.txCommit.inc();
  await observeStoreOperation(metrics, "enqueue", async () => 1);
  await observeStoreOperation(metrics, "ack", async () => {
    throw new Error("disk I/O error");
  }, () => "io").catch(() => undefined);
  const text = await metrics.registry.metrics();
  assert.match(text, /^spool_ingress_accepted_total 1$/m);
  assert.match(text, /^spool_ingress_rejected_total 2$/m);
  assert.match(text, /^spool_ingress_rejected_by_reason_total\{reason="queue_full",status="503"\} 1$/m);
  assert.match(text, /^spool_pull_dequeue_total\{route="\/github",status="200"\} 1$/m);
  assert.match(text, /^spool_delivery_dead_by_reason_total\{reason="other"\} 1$/m);
  assert.match(text, /^spool_store_sqlite_tx_commit_total 1$/m);
  assert.match(text, /^spool_store_operation_total\{backend="sqlite",operation="enqueue"\} 1$/m);
  assert.match(text, /^spool_store_errors_total\{backend="sqlite",operation="ack",kind="io"\} 1$/m);
  assert.match(text, /^spool_store_operation_seconds_count\{backend="sqlite",operation="ack"\} 1$/m);
});

handles("label helpers fold values into the spec's bounded sets", () => {
  assert.is(dequeueStatusLabel(204), "204");
  assert.is(dequeueStatusLabel(401), "4xx");
  assert.is(dequeueStatusLabel(503), "5xx");
  assert.is(deadReasonLabel(undefined), "unspecified");
  assert.is(deadReasonLabel(""), "unspecified");
  assert.is(deadReasonLabel("max_retries"), "max_retries");
  assert.is(deadReasonLabel("policy_denied"), "policy_denied");
  assert.is(deadReasonLabel("bad payload"), "other");
});

handles("two registries are independent (one per instance, no global state)", async () => {
  const first = metricsFor("sqlite");
  const second = metricsFor("sqlite");
  first.ingress.accepted.inc(5);
  assert.match(await second.registry.metrics(), /^spool_ingress_accepted_total 0$/m);
});

exposition("the metrics listener serves the exposition at its prefix over real HTTP", async () => {
  const metrics = metricsFor("memory");
  const listener = await createHttpServer(metricsHandler(metrics.registry, { path: "/metrics" }), {
    headersTimeoutMs: 5_000,
    requestTimeoutMs: 10_000,
    keepAliveTimeoutMs: 5_000,
    maxHeaderSize: 16_384,
  }).listen("127.0.0.1:0");
  try {
    const base = `http://127.0.0.1:${listener.address.port}`;
    const scrape = await fetch(`${base}/metrics`);
    assert.is(scrape.status, 200);
    assert.match(scrape.headers.get("content-type") ?? "", /^text\/plain/);
    assert.match(await scrape.text(), /^# TYPE spool_queue_depth gauge$/m);
    const wrongPath = await fetch(`${base}/other`);
    assert.is(wrongPath.status, 404);
    assert.is(((await wrongPath.json()) as { code: string }).code, "not_found");
    const wrongMethod = await fetch(`${base}/metrics`, { method: "POST" });
    assert.is(wrongMethod.status, 405);
    assert.is(wrongMethod.headers.get("allow"), "GET, HEAD");
    await wrongMethod.text();
  } finally {
    await listener.close(1_000);
  }
});

const series = suite("labelled families with series handles");

series("a LabelledCounter and LabelledHistogram expose exactly what prom-client's Counter and Histogram do", async () => {
  const buckets = [0.0001, 0.001, 0.01, 1];
  const reference = new Registry();
  const refCounter = new Counter({ name: "x_ops_total", help: "Ops.", labelNames: ["backend", "operation"], registers: [reference] });
  const refHistogram = new Histogram({ name: "x_op_seconds", help: "Op latency.", labelNames: ["backend", "operation"], buckets, registers: [reference] });
  const ours = new Registry();
  const counter = new LabelledCounter({ name: "x_ops_total", help: "Ops.", labelNames: ["backend", "operation"], registers: [ours] });
  const histogram = new LabelledHistogram({ name: "x_op_seconds", help: "Op latency.", labelNames: ["backend", "operation"], buckets, registers: [ours] });
  const enqueue = { backend: "sqlite", operation: "enqueue" };
  const odd = { backend: "sqlite", operation: 'a "quoted" \\ name' };
  const handle = histogram.series(enqueue);
  // Below, on and between bounds, above every bound, and zero.
  for (const seconds of [0.00005, 0.0001, 0.0007, 0.001, 0.5, 3, 0]) {
    refHistogram.observe(enqueue, seconds);
    handle.observe(seconds);
    refCounter.inc(enqueue);
    counter.series(enqueue).inc();
  }
  refHistogram.observe(odd, 0.002);
  histogram.observe(odd, 0.002);
  refCounter.inc(odd, 5);
  counter.inc(odd, 5);
  assert.is(await ours.metrics(), await reference.metrics());
  assert.match(await ours.metrics(), /^x_op_seconds_bucket\{le="0.001",backend="sqlite",operation="enqueue"\} 5$/m);

  // After a reset the series are gone until they record again, and kept handles still work.
  reference.resetMetrics();
  ours.resetMetrics();
  assert.is(await ours.metrics(), await reference.metrics());
  refHistogram.observe(enqueue, 0.02);
  handle.observe(0.02);
  const refStop = refHistogram.startTimer(odd);
  const stop = histogram.startTimer(odd);
  assert.ok(stop() >= 0 && refStop() >= 0);
  const text = await ours.metrics();
  assert.ok(text.includes('x_op_seconds_count{backend="sqlite",operation="a \\"quoted\\" \\\\ name"} 1'), text);
  // The timed series' sum and buckets hold two different elapsed times (one may fall under 0.1 ms, the
  // other not on a busy machine); its count and every other series must match exactly.
  const untimed = (metrics: string) => metrics.replace(/^x_op_seconds_(?:sum|bucket)\{[^}]*quoted[^}]*\} .*$/gm, "");
  assert.is(untimed(await ours.metrics()), untimed(await reference.metrics()));
});

series("a counter refuses to go down and a histogram refuses a value that is not a number", () => {
  const registry = new Registry();
  const counter = new LabelledCounter({ name: "y_total", help: "Y.", labelNames: ["k"], registers: [registry] });
  const histogram = new LabelledHistogram({ name: "y_seconds", help: "Y.", labelNames: ["k"], buckets: [1], registers: [registry] });
  assert.throws(() => counter.inc({ k: "a" }, -1));
  assert.throws(() => histogram.observe({ k: "a" }, Number.NaN));
  assert.throws(() => counter.series({} as { k: string }));
});

exposition.run();
handles.run();
series.run();
