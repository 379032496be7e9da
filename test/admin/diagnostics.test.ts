import { suite } from "uvu";
import * as assert from "uvu/assert";
import { computeTrendSignals, healthTrendSignals } from "../../runtime/admin/index.js";
import { deadByReason, tracingDiagnostics } from "../../runtime/admin/health/details.js";
import { recordDead } from "../../runtime/observability/metrics.js";
import { buildConfig, DEFAULT_TREND_SIGNALS, pullRoute } from "./ir-builder.js";
import { message, startHarness, type Harness } from "./harness.js";

const MINUTE = 60_000;
const diagnostics = suite<{ h: Harness }>("admin health diagnostics helpers");
diagnostics.before.each(async (context) => {
  context.h = await startHarness({ config: buildConfig([pullRoute("/orders"), pullRoute("/other")]), backend: "memory" });
});
diagnostics.after.each(async ({ h }) => h.close());

diagnostics("dead_by_reason reports every normalised label, zeros included", async ({ h }) => {
  for (const reason of ["max_retries", "max_retries", "no_retry", "upstream said no", null]) recordDead(h.metrics.delivery, reason);
  assert.is((await h.metrics.delivery.dead.get()).values[0].value, 5, "dead_total counts every reason");
  assert.equal(await deadByReason(h.metrics), { max_retries: 2, no_retry: 1, policy_denied: 0, unspecified: 1, other: 1 });
});

diagnostics("tracing diagnostics report the tracing gauge, its two failure counters and the dropped spans", async ({ h }) => {
  assert.equal(await tracingDiagnostics(h.metrics), { enabled: false, init_failures_total: 0, export_errors_total: 0, spans_dropped_total: 0 });
  h.metrics.tracing.enabled.set(1);
  h.metrics.tracing.initFailures.inc();
  h.metrics.tracing.exportErrors.inc(3);
  h.metrics.tracing.spansDropped.inc(7);
  assert.equal(await tracingDiagnostics(h.metrics), { enabled: true, init_failures_total: 1, export_errors_total: 3, spans_dropped_total: 7 });
});

diagnostics("trend signals read the store's samples of the signal window for the selected routes", async ({ h }) => {
  const stale = await computeTrendSignals(h.store, {}, DEFAULT_TREND_SIGNALS, h.clock.now());
  assert.equal(healthTrendSignals(stale).signals, ["sampling_stale"]);
  for (let i = 1; i <= 4; i++) {
    await h.store.enqueue(Array.from({ length: 10 }, (_, n) => message(`o${i}-${n}`, "/orders")));
    await h.store.captureTrendSample();
    h.clock.advance(MINUTE);
  }
  await h.store.enqueue([message("x1", "/other")]);
  await h.store.captureTrendSample();
  const orders = await computeTrendSignals(h.store, { route: "/orders" }, DEFAULT_TREND_SIGNALS, h.clock.now());
  assert.equal([orders.sampleCount, orders.latestTotal, orders.baselineTotal, orders.consecutiveIncreases], [5, 40, 25, 0], "the /other capture leaves /orders flat at 40");
  assert.equal(orders.activeAlerts, ["sustained_growth", "recent_surge", "queued_pressure"]);
  const health = healthTrendSignals(orders);
  assert.is(health.status, "warn");
  assert.equal(health.signals, orders.activeAlerts);
  assert.ok(health.operator_actions.length > 0);
  const other = await computeTrendSignals(h.store, { route: "/other" }, DEFAULT_TREND_SIGNALS, h.clock.now());
  assert.equal([other.latestTotal, other.baselineTotal], [1, 0]);
});

diagnostics.run();
