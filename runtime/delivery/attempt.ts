// One leased message, delivered once and settled: the attempt (HTTP push or a program run), then
// its record, then the ack or nack (docs/delivery.md). Called by each target worker (worker.ts).
import type { Dispatcher as UndiciDispatcher } from "undici";
import type { AttemptResult } from "./classify.js";
import type { CompiledEgressPolicy } from "./egress.js";
import { deliverExec, type ExecResult } from "./exec.js";
import { deliverHttp } from "./push.js";
import type { AttemptOutcome, AttemptRecord, Leased } from "./queue.js";
import type { ActiveSettings } from "./active.js";
import { writtenTarget, type AttemptEvent, type DispatcherDeps } from "./settings.js";
import { decideSettlement } from "./settle.js";
import type { PushSpan } from "../tracing/tracing.js";

/** What every delivery of one dispatcher shares. */
export interface DeliveryContext {
  readonly deps: DispatcherDeps;
  readonly random: () => number;
  /** Aborted when a stop runs past its drain budget: running deliveries end unsettled. */
  readonly hardStop: AbortSignal;
}

/** The egress a delivery started with: a reload's new agent is for later deliveries. */
export interface EgressInUse {
  readonly agent: UndiciDispatcher;
  readonly compiled: CompiledEgressPolicy;
}

interface Attempted {
  readonly result: AttemptResult;
  readonly output?: AttemptEvent["output"];
  /** A push attempt's span, ended once the retry policy has decided (its end time is the exchange's). */
  readonly span?: { readonly span: PushSpan; readonly endedAtMs: number };
}

export async function deliverAndSettle(cx: DeliveryContext, active: ActiveSettings, egress: EgressInUse, item: Leased): Promise<void> {
  const startedMs = cx.deps.clock.now();
  let attempted: Attempted;
  try {
    attempted = await attempt(cx, active, egress, item, startedMs);
  } catch (error) {
    // Shutdown past the drain budget: leave the lease to expire, record nothing.
    if (cx.hardStop.aborted) throw error;
    // A bug in a deliverer must not strand the message until its lease expires.
    cx.deps.observer?.onError?.(error, { route: active.route, target: active.settings.target, writtenTarget: writtenTarget(active.settings), operation: "deliver" });
    attempted = { result: { outcome: "retry", error: error instanceof Error ? error.message : String(error) } };
  }
  const outcome = await settle(cx, active, item, attempted, startedMs);
  attempted.span?.span.end({ ...attemptFailure(attempted.result), outcome, endedAtMs: attempted.span.endedAtMs });
}

function attemptFailure(result: AttemptResult): { statusCode?: number; error?: string } {
  return { ...(result.statusCode !== undefined ? { statusCode: result.statusCode } : {}), ...("error" in result && result.error !== undefined ? { error: result.error } : {}) };
}

/** The attempt itself: its outcome, and for a program its bounded output. */
async function attempt(cx: DeliveryContext, active: ActiveSettings, egress: EgressInUse, item: Leased, startedMs: number): Promise<Attempted> {
  const { route, settings } = active;
  if (settings.kind === "http") {
    const span = cx.deps.tracing?.startPush({ url: settings.url, route, messageId: item.id, attempt: item.attempt, stored: item.trace ?? null });
    const result = await deliverHttp({
      url: settings.url,
      body: item.body,
      headers: item.headers,
      extraHeaders: settings.headers,
      traceHeaders: span?.headers,
      messageId: item.id,
      attempt: item.attempt,
      timeoutMs: settings.timeoutMs,
      signer: active.signer,
      dispatcher: egress.agent,
      egress: egress.compiled,
      nowMs: startedMs,
      signal: cx.hardStop,
    }).catch((error: unknown) => {
      // Shutdown past the drain budget: the span ends unsettled.
      span?.end({ error: "aborted at shutdown", outcome: "abandoned", endedAtMs: Date.now() });
      throw error;
    });
    return span ? { result, span: { span, endedAtMs: Date.now() } } : { result };
  }
  const execResult: ExecResult = await deliverExec({
    program: settings.program,
    args: settings.args,
    body: item.body,
    env: settings.env,
    messageId: item.id,
    route,
    attempt: item.attempt,
    contentType: headerLookup(item.headers, "content-type"),
    headers: item.headers,
    timeoutMs: settings.timeoutMs,
    outputLimitBytes: settings.outputLimitBytes,
    killGraceMs: settings.killGraceMs,
    signal: cx.hardStop,
  });
  return { result: execResult, output: { stdout: execResult.stdout, stderr: execResult.stderr, truncated: execResult.outputTruncated } };
}

/**
 * The attempt is recorded before the lease is settled, so a message seen delivered or dead always
 * has its attempt listed (separate transactions on PostgreSQL would otherwise race). When the
 * record cannot be written the lease is not settled either: it expires and the message is
 * delivered again, with its attempt recorded then (at-least-once). A failed settlement likewise
 * leaves the lease to expire. Deliveries finishing together still share commits: the store queue
 * groups their records, then their settlements.
 */
async function settle(cx: DeliveryContext, active: ActiveSettings, item: Leased, attempted: Attempted, startedMs: number): Promise<AttemptOutcome> {
  const { route, settings } = active;
  const { deps } = cx;
  const record = decideSettlement(attempted.result, settings.retry, item, route, settings.target, cx.random);
  const how = record.outcome === "acked" ? undefined : record.outcome === "retry" ? { delayMs: record.delayMs } : { dead: true as const, reason: record.deadReason };
  const attemptRecord: AttemptRecord = record.attemptRecord;
  const settledMs = deps.clock.now();
  const nextAttemptAtMs = record.outcome === "retry" ? settledMs + record.delayMs : undefined;
  const output = attempted.output;
  const reportAttempt = () =>
    deps.observer?.onAttempt?.({
      ...attemptRecord,
      kind: settings.kind,
      writtenTarget: writtenTarget(settings),
      durationMs: settledMs - startedMs,
      ...(nextAttemptAtMs !== undefined ? { nextAttemptAtMs } : {}),
      ...(output ? { output } : {}),
    });
  try {
    await deps.queue.recordAttempt(attemptRecord);
  } catch (error) {
    deps.observer?.onError?.(error, { route, target: settings.target, writtenTarget: writtenTarget(settings), operation: "record_attempt" });
    reportAttempt();
    return record.outcome;
  }
  try {
    if (how === undefined) await deps.queue.ack([item.leaseId]);
    else await deps.queue.nack([item.leaseId], how);
  } catch (error) {
    deps.observer?.onError?.(error, { route, target: settings.target, writtenTarget: writtenTarget(settings), operation: how === undefined ? "ack" : "nack" });
  }
  reportAttempt();
  return record.outcome;
}

function headerLookup(headers: Readonly<Record<string, string>>, lowerName: string): string | undefined {
  for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === lowerName) return value;
  return undefined;
}
