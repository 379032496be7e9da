// Which settings each target worker runs with: a route's budget shared between its targets, the
// lease sized for its slowest target, and the signer built up front (docs/delivery.md).
import { EXEC_PIPE_GRACE_MS } from "./exec.js";
import type { DispatcherConfig, LeasePolicy, TargetSettings } from "./settings.js";
import { createSigner, type Signer } from "./sign.js";

/**
 * A lease outlives its delivery: max(minimum, the longest one delivery can take + slack), 30 s and
 * 5 s as the compiler resolves them (compiler/defaults.ts). The
 * reference system multiplies by the batch, whose messages it delivers one after another;
 * here every leased message starts its delivery at once (a batch is the free slots), so a message
 * whose delivery was cut off (a crash, a shutdown past its drain) is delivered again after one
 * delivery's worst case, not after the whole batch's (205 s at the defaults, hours at a large
 * deliver_concurrency).
 */
export function leaseTtlFor(deliveryWorstCaseMs: number, lease: LeasePolicy): number {
  return Math.max(lease.minLeaseTtlMs, deliveryWorstCaseMs + lease.leaseSlackMs);
}

/** How long one delivery to `settings` can run: its timeout, and for a program the kill grace and the wait for its output to close. */
export function deliveryWorstCaseMs(settings: TargetSettings): number {
  return settings.timeoutMs + (settings.kind === "exec" ? (settings.killGraceMs ?? 0) + EXEC_PIPE_GRACE_MS : 0);
}

/**
 * Splits a route's budget between its targets: each gets an equal share and at least one slot.
 * A fixed share (rather than one shared pool) is what keeps a hanging target from holding every
 * slot while a healthy one waits; fan-out gives every target the same messages, so equal is fair.
 * When the budget is below the number of targets each still gets one slot (the route then runs
 * more than its budget rather than starving a target).
 */
export function shareConcurrency(budget: number, targetCount: number): number[] {
  const base = Math.floor(budget / targetCount);
  const extra = budget % targetCount;
  return Array.from({ length: targetCount }, (_, i) => Math.max(1, base + (i < extra ? 1 : 0)));
}


/** One target of one route as its worker runs it. */
export interface ActiveSettings {
  readonly route: string;
  readonly settings: TargetSettings;
  readonly signer?: Signer;
  readonly limit: number;
  /** One lease TTL per route, from its slowest target (docs/delivery.md). */
  readonly leaseTtlMs: number;
}

/** The settings of every (route, target) of `config`, by workerKey; throws, changing nothing, on a target listed twice or a bad signing secret. */
export function buildActive(config: DispatcherConfig): Map<string, ActiveSettings> {
  const next = new Map<string, ActiveSettings>();
  for (const route of config.routes) {
    if (route.targets.length === 0) continue;
    const shares = shareConcurrency(Math.max(1, route.concurrency), route.targets.length);
    const leaseTtlMs = leaseTtlFor(Math.max(...route.targets.map(deliveryWorstCaseMs)), config.lease);
    route.targets.forEach((settings, i) => {
      const key = workerKey(route.route, settings.target);
      if (next.has(key)) throw new Error(`route ${route.route} lists target ${settings.target} twice`);
      // Signers are built here so a bad secret fails the reload before anything changes.
      const signer = settings.kind === "http" && settings.signing ? createSigner(settings.signing) : undefined;
      next.set(key, { route: route.route, settings, signer, limit: shares[i], leaseTtlMs });
    });
  }
  return next;
}

function workerKey(route: string, target: string): string {
  return `${route}\u0000${target}`;
}
