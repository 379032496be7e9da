// The memory backend: same semantics as SQLite and PostgreSQL, nothing durable. Every call validates
// first and mutates second, so a refused batch changes nothing. A retained-bytes / retained-items
// guard refuses new messages (memory_pressure) before the process runs out of memory.
import type { Clock } from "../../clock.js";
import { newLeaseId } from "../../ids.js";
import { activeTotal, matchesSelector, queueStatsFrom, rollupTrends, summarizeAging, topQueuedReport, type BacklogRow } from "../backlog.js";
import { observed, type StoreObserver } from "../observer.js";
import { positiveOrNull, type StoreLimits } from "../options.js";
import { longPoll, ReadySignal } from "../ready-signal.js";
import { SettledLeases, type SettleKind } from "../settled-leases.js";
import {
  AGING_SCAN_LIMIT,
  MESSAGE_STATES,
  StoreError,
  type AgingSummaryReport,
  type AttemptFilter,
  type AttemptRecord,
  type BacklogState,
  type DequeueRequest,
  type FilterOutcome,
  type Headers,
  type LeasedMessage,
  type LeaseOutcome,
  type LeaseScope,
  type LifecycleFilter,
  type LifecycleOp,
  type MemoryStoreStats,
  type MessageFilter,
  type MessageState,
  type MessageView,
  type NackOptions,
  type NewAttempt,
  type NewMessage,
  type OldestQueuedReport,
  type PruneReport,
  type QueuedBucket,
  type QueueStats,
  type ReadyListener,
  type Selector,
  type Store,
  type TopQueuedReport,
  type TrendSample,
  type TrendsReport,
  type TrendsRequest,
} from "../store.js";
import {
  lifecycleStates,
  retainedBytesOf,
  uniqueIds,
  validateDequeue,
  validateEnqueueBatch,
  validateLimit,
} from "../validate.js";
import { Heap } from "./heap.js";

interface Row {
  id: string;
  route: string;
  target: string;
  state: MessageState;
  payload: Uint8Array;
  headers: Headers;
  trace: Headers | null;
  receivedAtMs: number;
  nextRunAtMs: number;
  attempt: number;
  leaseId: string | null;
  leaseUntilMs: number | null;
  deadReason: string | null;
  retainedBytes: number;
  /** Bumped on every change, so heap entries pushed earlier can be recognised as stale. */
  version: number;
}

interface ReadyEntry {
  row: Row;
  version: number;
  nextRunAtMs: number;
  receivedAtMs: number;
  id: string;
}

interface LeaseEntry {
  row: Row;
  version: number;
  leaseUntilMs: number;
}

const readyBefore = (a: ReadyEntry, b: ReadyEntry) =>
  a.nextRunAtMs !== b.nextRunAtMs
    ? a.nextRunAtMs < b.nextRunAtMs
    : a.receivedAtMs !== b.receivedAtMs
      ? a.receivedAtMs < b.receivedAtMs
      : a.id < b.id;

function zeroByState(): Record<MessageState, number> {
  return { queued: 0, leased: 0, delivered: 0, dead: 0, canceled: 0 };
}

export interface MemoryStoreDeps {
  clock: Clock;
  observer: StoreObserver;
  limits: StoreLimits;
}

export class MemoryStore implements Store {
  readonly backend = "memory" as const;
  private readonly rows = new Map<string, Row>();
  private readonly leases = new Map<string, Row>();
  private readonly readyHeaps = new Map<string, Heap<ReadyEntry>>();
  private readonly targetsByRoute = new Map<string, Set<string>>();
  private readonly leaseExpiries = new Heap<LeaseEntry>((a, b) => a.leaseUntilMs < b.leaseUntilMs);
  private readonly countByState = zeroByState();
  private readonly bytesByState = zeroByState();
  private attempts: AttemptRecord[] = [];
  private attemptSeq = 0;
  private trendSamples: TrendSample[] = [];
  private readonly settled = new SettledLeases();
  private readonly ready: ReadySignal;
  private rejectedTotal = 0;
  private lastPressureReason = "";
  private closed = false;
  private readonly clock: Clock;
  private readonly observer: StoreObserver;
  private readonly limits: StoreLimits;

  constructor(deps: MemoryStoreDeps) {
    this.clock = deps.clock;
    this.observer = deps.observer;
    this.limits = deps.limits;
    this.ready = new ReadySignal(deps.clock);
  }

  onReady(listener: ReadyListener): () => void {
    return this.ready.subscribe(listener);
  }

  enqueue(items: readonly NewMessage[]): Promise<void> {
    return this.run("enqueue", () => {
      validateEnqueueBatch(items);
      items.forEach((item, index) => {
        if (this.rows.has(item.id)) throw new StoreError("duplicate_id", `message id ${item.id} already exists`, index);
      });
      const maxDepth = positiveOrNull(this.limits.maxDepth);
      const activeDepth = this.countByState.queued + this.countByState.leased;
      if (maxDepth !== null && activeDepth + items.length > maxDepth) {
        throw new StoreError("queue_full", `queue depth ${activeDepth} + ${items.length} would exceed max_depth ${maxDepth}`);
      }
      const batchBytes = items.reduce((sum, item) => sum + retainedBytesOf(item), 0);
      this.checkMemoryGuard(items.length, batchBytes);
      const nowMs = this.clock.now();
      for (const item of items) {
        const row: Row = {
          id: item.id,
          route: item.route,
          target: item.target,
          state: "queued",
          payload: new Uint8Array(item.payload),
          headers: { ...item.headers },
          trace: item.trace ? { ...item.trace } : null,
          receivedAtMs: item.receivedAtMs ?? nowMs,
          nextRunAtMs: item.nextRunAtMs ?? nowMs,
          attempt: 0,
          leaseId: null,
          leaseUntilMs: null,
          deadReason: null,
          retainedBytes: retainedBytesOf(item),
          version: 0,
        };
        this.rows.set(row.id, row);
        this.countByState.queued++;
        this.bytesByState.queued += row.retainedBytes;
        this.pushReady(row);
      }
      this.ready.notifyStored(items, nowMs);
    });
  }

  private checkMemoryGuard(itemCount: number, batchBytes: number): void {
    const itemLimit = positiveOrNull(this.limits.memoryMaxRetainedItems);
    const bytesLimit = positiveOrNull(this.limits.memoryMaxRetainedBytes);
    const retainedItems = this.rows.size;
    const retainedBytes = this.retainedBytesTotal();
    let reason = "";
    if (itemLimit !== null && retainedItems + itemCount > itemLimit) reason = "retained_items";
    else if (bytesLimit !== null && retainedBytes + batchBytes > bytesLimit) reason = "retained_bytes";
    if (reason === "") return;
    this.rejectedTotal++;
    this.lastPressureReason = reason;
    throw new StoreError(
      "memory_pressure",
      reason === "retained_items"
        ? `memory store holds ${retainedItems} items; limit ${itemLimit}`
        : `memory store retains ${retainedBytes} bytes; limit ${bytesLimit}`,
    );
  }

  async dequeue(request: DequeueRequest, signal?: AbortSignal): Promise<LeasedMessage[]> {
    validateDequeue(request);
    const attempt = () => this.run("dequeue", () => this.leaseReady(request));
    if (!request.maxWaitMs) return attempt();
    return longPoll({ route: request.route, maxWaitMs: request.maxWaitMs, signal, clock: this.clock, ready: this.ready }, attempt);
  }

  private leaseReady(request: DequeueRequest): LeasedMessage[] {
    const nowMs = this.clock.now();
    this.expireLeases(nowMs);
    const targets = request.target !== undefined ? [request.target] : [...(this.targetsByRoute.get(request.route) ?? [])];
    const heaps = targets.map((t) => this.readyHeaps.get(request.route + "\u0000" + t)).filter((h): h is Heap<ReadyEntry> => !!h);
    const leased: LeasedMessage[] = [];
    const leaseUntilMs = nowMs + request.leaseTtlMs;
    while (leased.length < request.batch) {
      let best: Heap<ReadyEntry> | undefined;
      for (const heap of heaps) {
        const top = this.validTop(heap);
        if (top && top.nextRunAtMs <= nowMs && (!best || readyBefore(top, best.peek()!))) best = heap;
      }
      if (!best) break;
      const row = best.pop()!.row;
      const leaseId = newLeaseId();
      this.moveState(row, "leased");
      row.attempt++;
      row.leaseId = leaseId;
      row.leaseUntilMs = leaseUntilMs;
      row.nextRunAtMs = leaseUntilMs;
      this.leases.set(leaseId, row);
      this.leaseExpiries.push({ row, version: row.version, leaseUntilMs });
      leased.push({
        id: row.id,
        leaseId,
        route: row.route,
        target: row.target,
        payload: row.payload,
        headers: row.headers,
        trace: row.trace,
        receivedAtMs: row.receivedAtMs,
        attempt: row.attempt,
        leaseUntilMs,
      });
    }
    if (leased.length > 0) this.ready.notifyAt(leaseUntilMs);
    return leased;
  }

  private validTop(heap: Heap<ReadyEntry>): ReadyEntry | undefined {
    for (let top = heap.peek(); top; top = heap.peek()) {
      if (top.row.state === "queued" && top.row.version === top.version && this.rows.get(top.id) === top.row) return top;
      heap.pop();
    }
    return undefined;
  }

  /** Leases past lease_until return to queued (spec: "leased → lease expiry → queued"). */
  private expireLeases(nowMs: number): void {
    for (let top = this.leaseExpiries.peek(); top && top.leaseUntilMs <= nowMs; top = this.leaseExpiries.peek()) {
      this.leaseExpiries.pop();
      const row = top.row;
      if (row.state !== "leased" || row.version !== top.version || this.rows.get(row.id) !== row) continue;
      this.leases.delete(row.leaseId!);
      row.leaseId = null;
      row.leaseUntilMs = null;
      this.moveState(row, "queued");
      this.pushReady(row);
    }
  }

  ack(leaseIds: readonly string[], scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.run("ack", () =>
      this.settleLeases(leaseIds, scope, "ack", (row, nowMs) => {
        this.leases.delete(row.leaseId!);
        if (positiveOrNull(this.limits.deliveredRetentionMs) === null) return this.deleteRow(row);
        row.leaseId = null;
        row.leaseUntilMs = null;
        row.nextRunAtMs = nowMs;
        this.moveState(row, "delivered");
      }),
    );
  }

  nack(leaseIds: readonly string[], how: NackOptions, scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.run("nack", () => {
      const routes = new Set<string>();
      const outcome = this.settleLeases(leaseIds, scope, "nack", (row, nowMs) => {
        this.leases.delete(row.leaseId!);
        row.leaseId = null;
        row.leaseUntilMs = null;
        if (how.dead) {
          row.deadReason = how.reason ? how.reason : null;
          row.nextRunAtMs = nowMs;
          this.moveState(row, "dead");
          return;
        }
        row.nextRunAtMs = nowMs + Math.max(0, how.delayMs);
        this.moveState(row, "queued");
        this.pushReady(row);
        routes.add(row.route);
        if (row.nextRunAtMs > nowMs) this.ready.notifyAt(row.nextRunAtMs);
      });
      for (const route of routes) this.ready.notify(route);
      return outcome;
    });
  }

  extend(leaseIds: readonly string[], leaseTtlMs: number, scope?: LeaseScope): Promise<LeaseOutcome> {
    return this.run("extend", () => {
      if (!(leaseTtlMs > 0)) throw new StoreError("invalid_argument", `lease ttl must be positive, got ${leaseTtlMs}`);
      return this.settleLeases(leaseIds, scope, null, (row, nowMs) => {
        const untilMs = Math.max(row.leaseUntilMs!, nowMs + leaseTtlMs);
        if (untilMs === row.leaseUntilMs) return;
        row.leaseUntilMs = untilMs;
        row.nextRunAtMs = untilMs;
        row.version++;
        this.leaseExpiries.push({ row, version: row.version, leaseUntilMs: untilMs });
        this.ready.notifyAt(untilMs);
      });
    });
  }

  /**
   * Applies `apply` to every valid lease and reports the others. `kind` null (extend) disables the
   * idempotent-repeat rule, which only covers settling operations.
   */
  private settleLeases(leaseIds: readonly string[], scope: LeaseScope | undefined, kind: SettleKind | null, apply: (row: Row, nowMs: number) => void): LeaseOutcome {
    const ids = uniqueIds(leaseIds, "lease");
    const nowMs = this.clock.now();
    const outcome: LeaseOutcome = { settled: [], conflicts: [] };
    for (const leaseId of ids) {
      const row = this.leases.get(leaseId);
      const inScope = row !== undefined && (scope?.route === undefined || row.route === scope.route);
      if (row && inScope && row.leaseUntilMs! > nowMs) {
        apply(row, nowMs);
        if (kind) this.settled.remember(leaseId, kind, nowMs);
        outcome.settled.push(leaseId);
      } else if (kind && this.settled.lookup(leaseId, nowMs) === kind) {
        outcome.settled.push(leaseId);
      } else if (row && inScope) {
        this.expireLeases(nowMs);
        outcome.conflicts.push({ leaseId, reason: "lease_expired" });
      } else {
        outcome.conflicts.push({ leaseId, reason: "lease_not_found" });
      }
    }
    return outcome;
  }

  recordAttempts(attempts: readonly NewAttempt[]): Promise<void> {
    return this.run("record_attempts", () => {
      const nowMs = this.clock.now();
      for (const a of attempts) {
        this.attemptSeq++;
        this.attempts.push({
          id: "att_" + this.attemptSeq.toString(16).padStart(16, "0"),
          messageId: a.messageId,
          route: a.route,
          target: a.target,
          attempt: a.attempt,
          statusCode: a.statusCode ?? null,
          error: a.error ?? null,
          outcome: a.outcome,
          deadReason: a.deadReason ?? null,
          createdAtMs: nowMs,
        });
      }
    });
  }

  listAttempts(filter: AttemptFilter): Promise<AttemptRecord[]> {
    return this.run("list_attempts", () => {
      validateLimit(filter.limit);
      const found: AttemptRecord[] = [];
      for (let i = this.attempts.length - 1; i >= 0 && found.length < filter.limit; i--) {
        const a = this.attempts[i];
        if (!matchesSelector(filter, a.route, a.target)) continue;
        if (filter.messageId !== undefined && a.messageId !== filter.messageId) continue;
        if (filter.outcome !== undefined && a.outcome !== filter.outcome) continue;
        if (filter.beforeMs !== undefined && !(a.createdAtMs < filter.beforeMs)) continue;
        found.push({ ...a });
      }
      return found;
    });
  }

  listMessages(filter: MessageFilter): Promise<MessageView[]> {
    return this.run("list_messages", () => {
      validateLimit(filter.limit);
      this.expireLeases(this.clock.now());
      const found: Row[] = [];
      for (const row of this.rows.values()) {
        if (filter.state !== undefined && row.state !== filter.state) continue;
        if (!matchesSelector(filter, row.route, row.target)) continue;
        if (filter.beforeMs !== undefined && !(row.receivedAtMs < filter.beforeMs)) continue;
        found.push(row);
      }
      found.sort((a, b) => b.receivedAtMs - a.receivedAtMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
      const include = { payload: filter.includePayload, headers: filter.includeHeaders, trace: filter.includeTrace };
      return found.slice(0, filter.limit).map((row) => viewOf(row, include));
    });
  }

  getMessages(ids: readonly string[], include: { payload?: boolean; headers?: boolean; trace?: boolean } = {}): Promise<MessageView[]> {
    return this.run("get_messages", () => {
      this.expireLeases(this.clock.now());
      return uniqueIds(ids, "message")
        .map((id) => this.rows.get(id))
        .filter((row): row is Row => row !== undefined)
        .map((row) => viewOf(row, include));
    });
  }

  changeByIds(op: LifecycleOp, ids: readonly string[]): Promise<number> {
    return this.run(op, () => {
      const unique = uniqueIds(ids, "message");
      const from = lifecycleStates(op, {});
      this.expireLeases(this.clock.now());
      const rows = unique.map((id) => this.rows.get(id)).filter((row): row is Row => row !== undefined && from.includes(row.state));
      this.applyLifecycle(op, rows);
      return rows.length;
    });
  }

  changeByFilter(op: LifecycleOp, filter: LifecycleFilter): Promise<FilterOutcome> {
    return this.run(`${op}_by_filter`, () => {
      validateLimit(filter.limit);
      const from = lifecycleStates(op, filter);
      this.expireLeases(this.clock.now());
      const matched: Row[] = [];
      for (const row of this.rows.values()) {
        if (!from.includes(row.state) || !matchesSelector(filter, row.route, row.target)) continue;
        if (filter.beforeMs !== undefined && !(row.receivedAtMs < filter.beforeMs)) continue;
        matched.push(row);
      }
      matched.sort((a, b) => a.receivedAtMs - b.receivedAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const selected = matched.slice(0, filter.limit);
      if (filter.previewOnly) return { matched: selected.length, changed: 0 };
      this.applyLifecycle(op, selected);
      return { matched: selected.length, changed: selected.length };
    });
  }

  private applyLifecycle(op: LifecycleOp, rows: Row[]): void {
    const nowMs = this.clock.now();
    const routes = new Set<string>();
    for (const row of rows) {
      if (row.leaseId !== null) this.leases.delete(row.leaseId);
      row.leaseId = null;
      row.leaseUntilMs = null;
      if (op === "cancel") {
        this.moveState(row, "canceled");
        continue;
      }
      // Requeue gives a fresh retry budget; resume continues where the message stopped (§2 row 19).
      if (op !== "resume") row.attempt = 0;
      row.deadReason = null;
      row.nextRunAtMs = nowMs;
      this.moveState(row, "queued");
      this.pushReady(row);
      routes.add(row.route);
    }
    for (const route of routes) this.ready.notify(route);
  }

  deleteDead(ids: readonly string[]): Promise<number> {
    return this.run("dlq_delete", () => {
      let deleted = 0;
      for (const id of uniqueIds(ids, "message")) {
        const row = this.rows.get(id);
        if (row?.state !== "dead") continue;
        this.deleteRow(row);
        deleted++;
      }
      return deleted;
    });
  }

  queueStats(): Promise<QueueStats> {
    return this.run("queue_stats", () => {
      const nowMs = this.clock.now();
      this.expireLeases(nowMs);
      return queueStatsFrom({ ...this.countByState }, this.queuedBuckets({}), this.leasedByRoute(), nowMs);
    });
  }

  private leasedByRoute(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const row of this.leases.values()) counts[row.route] = (counts[row.route] ?? 0) + 1;
    return counts;
  }

  private queuedBuckets(selector: Selector): QueuedBucket[] {
    const buckets = new Map<string, QueuedBucket>();
    for (const row of this.rows.values()) {
      if (row.state !== "queued" || !matchesSelector(selector, row.route, row.target)) continue;
      const key = row.route + "\u0000" + row.target;
      const bucket = buckets.get(key);
      if (!bucket) {
        buckets.set(key, { route: row.route, target: row.target, queued: 1, oldestQueuedReceivedAtMs: row.receivedAtMs, earliestQueuedNextRunAtMs: row.nextRunAtMs });
      } else {
        bucket.queued++;
        bucket.oldestQueuedReceivedAtMs = Math.min(bucket.oldestQueuedReceivedAtMs, row.receivedAtMs);
        bucket.earliestQueuedNextRunAtMs = Math.min(bucket.earliestQueuedNextRunAtMs, row.nextRunAtMs);
      }
    }
    return [...buckets.values()];
  }

  topQueued(selector: Selector, limit: number): Promise<TopQueuedReport> {
    return this.run("backlog_top_queued", () => {
      validateLimit(limit);
      this.expireLeases(this.clock.now());
      return topQueuedReport(this.countByState, this.queuedBuckets(selector), limit);
    });
  }

  oldestQueued(selector: Selector, limit: number): Promise<OldestQueuedReport> {
    return this.run("backlog_oldest_queued", () => {
      validateLimit(limit);
      this.expireLeases(this.clock.now());
      const queued = [...this.rows.values()].filter((row) => row.state === "queued" && matchesSelector(selector, row.route, row.target));
      queued.sort((a, b) => a.receivedAtMs - b.receivedAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const items = queued.slice(0, limit).map((row) => ({
        id: row.id,
        route: row.route,
        target: row.target,
        receivedAtMs: row.receivedAtMs,
        attempt: row.attempt,
        nextRunAtMs: row.nextRunAtMs,
      }));
      return {
        queueTotal: activeTotal(this.countByState),
        queuedTotal: queued.length,
        limit,
        returned: items.length,
        truncated: queued.length > limit,
        items,
      };
    });
  }

  agingSummary(selector: Selector, states: readonly BacklogState[], limit: number): Promise<AgingSummaryReport> {
    return this.run("backlog_aging_summary", () => {
      validateLimit(limit);
      const nowMs = this.clock.now();
      this.expireLeases(nowMs);
      const rows: BacklogRow[] = [];
      for (const row of this.rows.values()) {
        if (!(states as readonly string[]).includes(row.state) || !matchesSelector(selector, row.route, row.target)) continue;
        rows.push({ route: row.route, target: row.target, state: row.state as BacklogState, receivedAtMs: row.receivedAtMs, nextRunAtMs: row.nextRunAtMs });
      }
      rows.sort((a, b) => a.receivedAtMs - b.receivedAtMs);
      return summarizeAging({
        rows: rows.slice(0, AGING_SCAN_LIMIT),
        nowMs,
        states,
        limit,
        queueTotal: activeTotal(this.countByState),
        queuedTotal: this.countByState.queued,
        sourceBounded: rows.length > AGING_SCAN_LIMIT,
      });
    });
  }

  captureTrendSample(): Promise<number> {
    return this.run("capture_trend_sample", () => {
      const nowMs = this.clock.now();
      this.expireLeases(nowMs);
      const byBucket = new Map<string, TrendSample>();
      for (const row of this.rows.values()) {
        if (row.state !== "queued" && row.state !== "leased" && row.state !== "dead") continue;
        const key = row.route + "\u0000" + row.target;
        let sample = byBucket.get(key);
        if (!sample) byBucket.set(key, (sample = { capturedAtMs: nowMs, route: row.route, target: row.target, queued: 0, leased: 0, dead: 0 }));
        sample[row.state]++;
      }
      // An empty queue still records that a capture happened, so trends can tell "empty" from "stale".
      if (byBucket.size === 0) byBucket.set("", { capturedAtMs: nowMs, route: "", target: "", queued: 0, leased: 0, dead: 0 });
      this.trendSamples.push(...byBucket.values());
      return byBucket.size;
    });
  }

  trends(request: TrendsRequest): Promise<TrendsReport> {
    return this.run("backlog_trends", () => {
      const sinceMs = request.untilMs - request.windowMs;
      return rollupTrends(
        this.trendSamples.filter((s) => s.capturedAtMs >= sinceMs && s.capturedAtMs < request.untilMs),
        request,
      );
    });
  }

  prune(): Promise<PruneReport> {
    return this.run("prune", () => {
      const nowMs = this.clock.now();
      this.expireLeases(nowMs);
      const report: PruneReport = { queued: 0, delivered: 0, dead: 0, attempts: 0, trendSamples: 0 };
      const queueMaxAge = positiveOrNull(this.limits.queueRetentionMs);
      const deliveredMaxAge = positiveOrNull(this.limits.deliveredRetentionMs);
      const dlqMaxAge = positiveOrNull(this.limits.dlqRetentionMs);
      const dead: Row[] = [];
      for (const row of [...this.rows.values()]) {
        if (row.state === "queued" && queueMaxAge !== null && row.receivedAtMs < nowMs - queueMaxAge) {
          this.deleteRow(row);
          report.queued++;
        } else if (row.state === "delivered" && (deliveredMaxAge === null || row.nextRunAtMs < nowMs - deliveredMaxAge)) {
          this.deleteRow(row);
          report.delivered++;
        } else if (row.state === "dead") {
          if (dlqMaxAge !== null && row.nextRunAtMs < nowMs - dlqMaxAge) {
            this.deleteRow(row);
            report.dead++;
          } else dead.push(row);
        }
      }
      const dlqMaxDepth = positiveOrNull(this.limits.dlqMaxDepth);
      if (dlqMaxDepth !== null && dead.length > dlqMaxDepth) {
        // Keeps the newest dead messages (reference: dlq_retention max_depth).
        dead.sort((a, b) => a.nextRunAtMs - b.nextRunAtMs || a.receivedAtMs - b.receivedAtMs || (a.id < b.id ? -1 : 1));
        for (const row of dead.slice(0, dead.length - dlqMaxDepth)) {
          this.deleteRow(row);
          report.dead++;
        }
      }
      const attemptsMaxAge = positiveOrNull(this.limits.attemptsRetentionMs);
      const attemptsMaxRows = positiveOrNull(this.limits.attemptsMaxRows);
      const attemptsBefore = this.attempts.length;
      if (attemptsMaxAge !== null) this.attempts = this.attempts.filter((a) => a.createdAtMs >= nowMs - attemptsMaxAge);
      if (attemptsMaxRows !== null && this.attempts.length > attemptsMaxRows) this.attempts = this.attempts.slice(this.attempts.length - attemptsMaxRows);
      report.attempts = attemptsBefore - this.attempts.length;
      const trendMaxAge = positiveOrNull(this.limits.trendRetentionMs);
      if (trendMaxAge !== null) {
        const samplesBefore = this.trendSamples.length;
        this.trendSamples = this.trendSamples.filter((s) => s.capturedAtMs >= nowMs - trendMaxAge);
        report.trendSamples = samplesBefore - this.trendSamples.length;
      }
      return report;
    });
  }

  memoryStats(): MemoryStoreStats {
    const itemLimit = positiveOrNull(this.limits.memoryMaxRetainedItems);
    const bytesLimit = positiveOrNull(this.limits.memoryMaxRetainedBytes);
    const retainedBytesTotal = this.retainedBytesTotal();
    let reason = "";
    if (itemLimit !== null && this.rows.size >= itemLimit) reason = "retained_items";
    else if (bytesLimit !== null && retainedBytesTotal >= bytesLimit) reason = "retained_bytes";
    return {
      backend: "memory",
      itemsByState: { ...this.countByState },
      retainedBytesByState: { ...this.bytesByState },
      retainedBytesTotal,
      memoryPressure: {
        active: reason !== "",
        reason: reason || this.lastPressureReason,
        retainedItemLimit: itemLimit,
        retainedBytesLimit: bytesLimit,
        rejectedTotal: this.rejectedTotal,
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.ready.close();
  }

  private retainedBytesTotal(): number {
    let total = 0;
    for (const state of MESSAGE_STATES) total += this.bytesByState[state];
    return total;
  }

  private moveState(row: Row, to: MessageState): void {
    this.countByState[row.state]--;
    this.bytesByState[row.state] -= row.retainedBytes;
    row.state = to;
    row.version++;
    this.countByState[to]++;
    this.bytesByState[to] += row.retainedBytes;
  }

  private deleteRow(row: Row): void {
    this.rows.delete(row.id);
    if (row.leaseId !== null) this.leases.delete(row.leaseId);
    this.countByState[row.state]--;
    this.bytesByState[row.state] -= row.retainedBytes;
    row.version++;
  }

  private pushReady(row: Row): void {
    const key = row.route + "\u0000" + row.target;
    let heap = this.readyHeaps.get(key);
    if (!heap) {
      heap = new Heap<ReadyEntry>(readyBefore);
      this.readyHeaps.set(key, heap);
      let targets = this.targetsByRoute.get(row.route);
      if (!targets) this.targetsByRoute.set(row.route, (targets = new Set()));
      targets.add(row.target);
    }
    heap.push({ row, version: row.version, nextRunAtMs: row.nextRunAtMs, receivedAtMs: row.receivedAtMs, id: row.id });
  }

  /** Every call is observed and refused after close; the work itself is synchronous. */
  private run<T>(operation: string, work: () => T): Promise<T> {
    return observed(this.observer, operation, async () => {
      if (this.closed) throw new StoreError("closed", "the store is closed");
      return work();
    });
  }
}

function viewOf(row: Row, include: { payload?: boolean; headers?: boolean; trace?: boolean }): MessageView {
  const view: MessageView = {
    id: row.id,
    route: row.route,
    target: row.target,
    state: row.state,
    receivedAtMs: row.receivedAtMs,
    attempt: row.attempt,
    nextRunAtMs: row.nextRunAtMs,
    leaseUntilMs: row.leaseUntilMs,
    deadReason: row.deadReason,
  };
  if (include.payload) view.payload = row.payload;
  if (include.headers) view.headers = { ...row.headers };
  if (include.trace) view.trace = row.trace ? { ...row.trace } : null;
  return view;
}
