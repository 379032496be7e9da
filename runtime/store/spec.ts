// The store a config asks for: backend, location and the limits the store enforces itself.
import { getHeapStatistics } from "node:v8";
import type { SpoolConfig } from "../../compiler/ir.js";
import type { StoreSpec } from "./open.js";

export interface StoreLocation {
  sqlitePath?: string;
  postgresDsn?: string;
  postgresSchema?: string;
}

/**
 * Trend samples are kept 30 days (docs/decisions.md D53) and captured every
 * `defaults.trend_signals.expected_capture_interval` (default 1m, the reference's fixed interval),
 * so the sampling_stale signal measures the sampler it expects.
 */
const TREND_RETENTION_MS = 30 * 86_400_000;
// The memory backend must refuse with memory_pressure before the process runs out of heap
// (docs/decisions.md D46). The Spoolfile has no knob for it, so the guard is
// half of the V8 heap limit: room for the payloads plus the rest of the process.
const MEMORY_HEAP_SHARE = 0.5;

export function storeSpecFor(config: SpoolConfig, location: StoreLocation): StoreSpec {
  const { retention } = config;
  return {
    backend: config.backend,
    sqlitePath: location.sqlitePath,
    postgresDsn: location.postgresDsn,
    postgresSchema: location.postgresSchema,
    maxDepth: config.queueLimits.maxDepth,
    dropOldest: config.queueLimits.dropPolicy === "drop_oldest",
    queueRetentionMs: retention.queue.maxAgeMs,
    deliveredRetentionMs: retention.delivered.maxAgeMs,
    dlqRetentionMs: retention.dlq.maxAgeMs,
    dlqMaxDepth: retention.dlq.maxDepth,
    attemptsRetentionMs: retention.attempts.maxAgeMs,
    attemptsMaxRows: retention.attempts.maxRows,
    trendRetentionMs: TREND_RETENTION_MS,
    memoryMaxRetainedBytes: config.backend === "memory" ? Math.floor(getHeapStatistics().heap_size_limit * MEMORY_HEAP_SHARE) : null,
    memoryMaxRetainedItems: null,
    pruneIntervalMs: retention.queue.pruneIntervalMs,
    trendSampleIntervalMs: config.defaults.trendSignals.expectedCaptureIntervalMs,
  };
}
