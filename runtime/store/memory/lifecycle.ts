// Lifecycle operations on the memory backend (cancel, requeue, resume, dlq_requeue, DLQ delete), by
// ids or by filter (oldest received first, capped by the limit).
import { matchesSelector } from "../backlog.js";
import type { FilterOutcome, LifecycleFilter, LifecycleOp } from "../records.js";
import { lifecycleStates, uniqueIds } from "../validate.js";
import type { MemoryContext } from "./context.js";
import { oldestFirst, type Row } from "./table.js";

export function changeByIds(cx: MemoryContext, op: LifecycleOp, ids: readonly string[]): number {
  const unique = uniqueIds(ids, "message");
  const from = lifecycleStates(op, {});
  cx.table.expireLeases(cx.clock.now());
  const rows = unique.map((id) => cx.table.get(id)).filter((row): row is Row => row !== undefined && from.includes(row.state));
  applyLifecycle(cx, op, rows);
  return rows.length;
}

export function changeByFilter(cx: MemoryContext, op: LifecycleOp, filter: LifecycleFilter): FilterOutcome {
  const from = lifecycleStates(op, filter);
  cx.table.expireLeases(cx.clock.now());
  const matched: Row[] = [];
  for (const row of cx.table.rows.values()) {
    if (!from.includes(row.state) || !matchesSelector(filter, row.route, row.target)) continue;
    if (filter.beforeMs !== undefined && !(row.receivedAtMs < filter.beforeMs)) continue;
    matched.push(row);
  }
  const selected = matched.sort(oldestFirst).slice(0, filter.limit);
  if (filter.previewOnly) return { matched: selected.length, changed: 0 };
  applyLifecycle(cx, op, selected);
  return { matched: selected.length, changed: selected.length };
}

export function deleteDead(cx: MemoryContext, ids: readonly string[]): number {
  let deleted = 0;
  for (const id of uniqueIds(ids, "message")) {
    const row = cx.table.get(id);
    if (row?.state !== "dead") continue;
    cx.table.delete(row);
    deleted++;
  }
  return deleted;
}

function applyLifecycle(cx: MemoryContext, op: LifecycleOp, rows: Row[]): void {
  const nowMs = cx.clock.now();
  const routes = new Set<string>();
  for (const row of rows) {
    if (op === "cancel") {
      cx.table.settle(row, "canceled", row.nextRunAtMs);
      continue;
    }
    // Requeue gives a fresh retry budget; resume continues where the message stopped (docs/decisions.md D25).
    if (op !== "resume") row.attempt = 0;
    row.deadReason = null;
    cx.table.settle(row, "queued", nowMs);
    routes.add(row.route);
  }
  for (const route of routes) cx.ready.notify(route);
}
