// The memory backend's data: every message row by id, and the indexes that keep the hot path off
// O(n) at a 1M backlog: live leases by lease id, one ready queue per route/target in dequeue order
// (a FIFO run beside a heap, heap.ts), one heap of lease expiries, and per-state counts and retained
// bytes. Queue and heap entries are deleted lazily: each carries the row version it was pushed at,
// and a changed row makes it stale (deleting a row bumps its version too, so no lookup by id is
// needed to recognise an entry whose row is gone: at 1M rows that lookup was a cache miss per entry).
import type { Headers, MessageState } from "../records.js";
import { Heap, RunQueue } from "./heap.js";

export interface Row {
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
  /** Bumped on every change, so queue and heap entries pushed earlier can be recognised as stale. */
  version: number;
}

interface ReadyEntry {
  row: Row;
  version: number;
  nextRunAtMs: number;
  receivedAtMs: number;
  id: string;
}

/** Ready rows of one route/target, next to dequeue in front. */
export type ReadyQueue = RunQueue<ReadyEntry>;

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

export function zeroByState(): Record<MessageState, number> {
  return { queued: 0, leased: 0, delivered: 0, dead: 0, canceled: 0 };
}

/** Oldest received first, then by id: the order filters, oldest_queued and lifecycle selections use. */
export const oldestFirst = (a: Row, b: Row) => a.receivedAtMs - b.receivedAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export class MessageTable {
  readonly rows = new Map<string, Row>();
  readonly countByState = zeroByState();
  readonly bytesByState = zeroByState();
  /** Each row's latest lease id → the row, from its lease until it is leased again, settled or deleted. */
  private readonly leases = new Map<string, Row>();
  private readonly readyByKey = new Map<string, ReadyQueue>();
  private readonly targetsByRoute = new Map<string, Set<string>>();
  private readonly leaseExpiries = new Heap<LeaseEntry>((a, b) => a.leaseUntilMs < b.leaseUntilMs);

  get size(): number {
    return this.rows.size;
  }

  get(id: string): Row | undefined {
    return this.rows.get(id);
  }

  /** A queued row, new to the table. */
  insert(row: Row): void {
    this.rows.set(row.id, row);
    this.countByState[row.state]++;
    this.bytesByState[row.state] += row.retainedBytes;
    if (row.state === "queued") this.pushReady(row);
  }

  /**
   * The row this lease was issued for while it is still the row's latest lease: leased, or queued
   * again after the lease ran out (so a late ack is told lease_expired), or undefined.
   */
  leaseHolder(leaseId: string): Row | undefined {
    return this.leases.get(leaseId);
  }
  /** Live leases per route (spool_pull_lease_active). */
  leasedByRoute(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const row of this.leases.values()) if (row.state === "leased") counts[row.route] = (counts[row.route] ?? 0) + 1;
    return counts;
  }


  /** The ready queues a dequeue draws from: one target's, or every target's of the route. */
  readyQueues(route: string, target: string | undefined): ReadyQueue[] {
    const targets = target !== undefined ? [target] : this.targetsByRoute.get(route) ?? [];
    const queues: ReadyQueue[] = [];
    for (const t of targets) {
      const queue = this.readyByKey.get(route + "\u0000" + t);
      if (queue) queues.push(queue);
    }
    return queues;
  }

  /** Takes the row that comes first (next_run_at, received_at, id) among the queues' fronts, if ready at nowMs. */
  takeReady(queues: readonly ReadyQueue[], nowMs: number): Row | undefined {
    let best: ReadyQueue | undefined;
    for (const queue of queues) {
      const top = this.validTop(queue);
      if (top && top.nextRunAtMs <= nowMs && (!best || readyBefore(top, best.peek()!))) best = queue;
    }
    return best?.pop()!.row;
  }

  /** queued → leased under a new lease. */
  lease(row: Row, leaseId: string, leaseUntilMs: number): void {
    this.moveState(row, "leased");
    row.attempt++;
    if (row.leaseId !== null) this.leases.delete(row.leaseId);
    row.leaseId = leaseId;
    row.leaseUntilMs = leaseUntilMs;
    row.nextRunAtMs = leaseUntilMs;
    this.leases.set(leaseId, row);
    this.leaseExpiries.push({ row, version: row.version, leaseUntilMs });
  }

  /** Moves a live lease's expiry later. */
  extendLease(row: Row, leaseUntilMs: number): void {
    row.leaseUntilMs = leaseUntilMs;
    row.nextRunAtMs = leaseUntilMs;
    row.version++;
    this.leaseExpiries.push({ row, version: row.version, leaseUntilMs });
  }

  /** Ends the row's lease, if any, and moves it to `to`; a queued row becomes ready at nextRunAtMs. */
  settle(row: Row, to: MessageState, nextRunAtMs: number): void {
    this.dropLease(row);
    row.nextRunAtMs = nextRunAtMs;
    this.moveState(row, to);
    if (to === "queued") this.pushReady(row);
  }

  /** Leases past lease_until return to queued (spec: "leased → lease expiry → queued"). */
  expireLeases(nowMs: number): void {
    for (let top = this.leaseExpiries.peek(); top && top.leaseUntilMs <= nowMs; top = this.leaseExpiries.peek()) {
      this.leaseExpiries.pop();
      const row = top.row;
      if (row.version !== top.version || row.state !== "leased") continue;
      // The lease id stays with the row until it is leased again or settled, so an ack that comes
      // too late is told lease_expired, not lease_not_found, however soon the sweep ran.
      row.leaseUntilMs = null;
      this.moveState(row, "queued");
      this.pushReady(row);
    }
  }

  delete(row: Row): void {
    this.rows.delete(row.id);
    if (row.leaseId !== null) this.leases.delete(row.leaseId);
    this.countByState[row.state]--;
    this.bytesByState[row.state] -= row.retainedBytes;
    row.version++;
  }

  retainedBytesTotal(): number {
    let total = 0;
    for (const bytes of Object.values(this.bytesByState)) total += bytes;
    return total;
  }

  private dropLease(row: Row): void {
    if (row.leaseId !== null) this.leases.delete(row.leaseId);
    row.leaseId = null;
    row.leaseUntilMs = null;
  }

  private moveState(row: Row, to: MessageState): void {
    this.countByState[row.state]--;
    this.bytesByState[row.state] -= row.retainedBytes;
    row.state = to;
    row.version++;
    this.countByState[to]++;
    this.bytesByState[to] += row.retainedBytes;
  }

  private pushReady(row: Row): void {
    const key = row.route + "\u0000" + row.target;
    let queue = this.readyByKey.get(key);
    if (!queue) {
      queue = new RunQueue<ReadyEntry>(readyBefore);
      this.readyByKey.set(key, queue);
      let targets = this.targetsByRoute.get(row.route);
      if (!targets) this.targetsByRoute.set(row.route, (targets = new Set()));
      targets.add(row.target);
    }
    queue.push({ row, version: row.version, nextRunAtMs: row.nextRunAtMs, receivedAtMs: row.receivedAtMs, id: row.id });
  }

  private validTop(queue: ReadyQueue): ReadyEntry | undefined {
    for (let top = queue.peek(); top; top = queue.peek()) {
      if (top.row.version === top.version && top.row.state === "queued") return top;
      queue.pop();
    }
    return undefined;
  }
}
