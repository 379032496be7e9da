// What the running service asks of its store, derived from the IR: limits, retention and schedules;
// and which of those settings a reload cannot change under an open store.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { restartRequiredChanges } from "../../runtime/reload/policy.js";
import { storeSpecFor } from "../../runtime/store/spec.js";
import { defaultConfig } from "../helpers/ir.js";

const test = suite("store spec from the IR");

test("trend samples are captured every defaults.trend_signals.expected_capture_interval", () => {
  const config = defaultConfig();
  assert.equal(storeSpecFor(config, {}).trendSampleIntervalMs, 60_000);
  config.defaults = { ...config.defaults, trendSignals: { ...config.defaults.trendSignals, expectedCaptureIntervalMs: 5_000 } };
  assert.equal(storeSpecFor(config, {}).trendSampleIntervalMs, 5_000);
});

test("limits and retention come from the IR", () => {
  const config = defaultConfig();
  const spec = storeSpecFor(config, { sqlitePath: "/tmp/x.db" });
  assert.equal(spec.maxDepth, config.queueLimits.maxDepth);
  assert.equal(spec.queueRetentionMs, config.retention.queue.maxAgeMs);
  assert.equal(spec.pruneIntervalMs, config.retention.queue.pruneIntervalMs);
  assert.equal(spec.sqlitePath, "/tmp/x.db");
});

test("a reload changing the trend capture interval needs a restart (the store's sampler runs on it)", () => {
  const current = defaultConfig();
  const next = defaultConfig();
  next.defaults = { ...next.defaults, trendSignals: { ...next.defaults.trendSignals, expectedCaptureIntervalMs: 5_000 } };
  assert.equal(restartRequiredChanges(current, next), ["defaults.trend_signals.expected_capture_interval"]);
  assert.equal(restartRequiredChanges(current, defaultConfig()), []);
});

test.run();
