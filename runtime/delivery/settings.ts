// What the dispatcher is given: each route's targets as plain settings, its dependencies and the
// observer it reports to (docs/delivery.md). runtime/delivery/from-ir.ts builds these from the IR.
import type { Dispatcher as UndiciDispatcher } from "undici";
import type { DeliverDefaults, ExecTarget, HttpTarget } from "../../compiler/index.js";
import type { Clock } from "../time/clock.js";
import type { EgressPolicy, ResolveHost } from "./egress.js";
import type { AttemptRecord, DeliveryQueue } from "./queue.js";
import type { SigningConfig } from "./sign.js";
import type { Tracing } from "../tracing/tracing.js";

/** An IR HttpTarget (compiler/ir.ts) as the dispatcher runs it: headers as a record, `sign` as a SigningConfig. */
export interface HttpTargetSettings extends Pick<HttpTarget, "kind" | "target" | "url" | "written" | "timeoutMs" | "retry"> {
  /** The target's `header` directives. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly signing?: SigningConfig;
}

/** An IR ExecTarget (compiler/ir.ts) as the dispatcher runs it: env as a record; the output limit and kill grace are for tests. */
export interface ExecTargetSettings extends Pick<ExecTarget, "kind" | "target" | "program" | "timeoutMs" | "retry"> {
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly outputLimitBytes?: number;
  /** 0 (default): SIGKILL on timeout; >0: SIGTERM first, SIGKILL after this many ms. */
  readonly killGraceMs?: number;
}

export type TargetSettings = HttpTargetSettings | ExecTargetSettings;

export interface RouteDeliveryConfig {
  readonly route: string;
  /** `deliver_concurrency` (default `defaults.deliver.concurrency`, 20): the route's budget. */
  readonly concurrency: number;
  readonly targets: readonly TargetSettings[];
}

export interface DispatcherConfig {
  readonly routes: readonly RouteDeliveryConfig[];
  readonly egress: EgressPolicy;
  /** How long a lease outlives its delivery: the IR's `defaults.deliver` (compiler/defaults.ts). */
  readonly lease: LeasePolicy;
}

export type LeasePolicy = Pick<DeliverDefaults, "minLeaseTtlMs" | "leaseSlackMs">;

/** How logs name a target: its URL as written in the Spoolfile (placeholders unexpanded), else its identity. */
export function writtenTarget(settings: TargetSettings): string {
  return (settings.kind === "http" ? settings.written : undefined) ?? settings.target;
}

export interface AttemptEvent extends AttemptRecord {
  readonly kind: "http" | "exec";
  /** writtenTarget of the target's settings: what the log shows as `target`. */
  readonly writtenTarget: string;
  readonly durationMs: number;
  /** A retry: when the message is due again (the clock's now at settlement plus the backoff). */
  readonly nextAttemptAtMs?: number;
  /** Exec only: bounded program output, for logging. */
  readonly output?: { readonly stdout: string; readonly stderr: string; readonly truncated: boolean };
}

export interface DeliveryObserver {
  /** Called once per attempt after it is settled: feed spool_delivery_* counters from here. */
  onAttempt?(event: AttemptEvent): void;
  /** Store or internal failures the loop survived (it backs off and goes on). */
  onError?(error: unknown, context: { readonly route: string; readonly target: string; readonly writtenTarget: string; readonly operation: string }): void;
}

export interface DispatcherDeps {
  readonly queue: DeliveryQueue;
  readonly clock: Clock;
  readonly random?: () => number;
  readonly observer?: DeliveryObserver;
  /** Injected into the default egress agent (tests resolve fake names). */
  readonly resolveHost?: ResolveHost;
  /** Replaces the egress agent factory entirely. */
  readonly createAgent?: (policy: EgressPolicy) => UndiciDispatcher;
  /** Wait after a failed dequeue before trying again. Default 1 s. */
  readonly storeRetryMs?: number;
  /** A CLIENT span per push attempt (runtime/tracing); absent or answering undefined: nothing traced, no header added. */
  readonly tracing?: Pick<Tracing, "startPush">;
}

export interface StopReport {
  /** Deliveries still running when the drain budget ran out; their leases expire on their own. */
  readonly abandoned: number;
}

export interface DeliveryDispatcher {
  start(): void;
  /** Applies new targets, headers, signing, retry and egress; running deliveries finish on their old settings. */
  reconfigure(config: DispatcherConfig): void;
  stop(options: { drainMs: number }): Promise<StopReport>;
  /** Deliveries running now, per "route target" key and in total. */
  inFlight(): { total: number; byTarget: Record<string, number> };
}
