// Enqueue on the memory backend: the whole batch is checked (ids, max_depth, footprint guard) before
// any row is stored or, under drop_policy drop_oldest, removed, so a refused batch changes nothing.
import { positiveOrNull } from "../options.js";
import type { NewMessage } from "../records.js";
import { StoreError } from "../store.js";
import { retainedBytesOf } from "../validate.js";
import type { MemoryContext } from "./context.js";
import type { MemoryGuard } from "./guard.js";
import { oldestFirst, type Row } from "./table.js";

/** Stores the batch (validated by the facade); returns how many queued messages it removed to make room (StoreLimits.dropOldest). */
export function enqueue(cx: MemoryContext, guard: MemoryGuard, items: readonly NewMessage[]): number {
  const { table, limits } = cx;
  items.forEach((item, index) => {
    if (table.get(item.id)) throw new StoreError("duplicate_id", `message id ${item.id} already exists`, index);
  });
  const maxDepth = positiveOrNull(limits.maxDepth);
  const activeDepth = table.countByState.queued + table.countByState.leased;
  const over = maxDepth === null ? 0 : activeDepth + items.length - maxDepth;
  const dropped = over > 0 && limits.dropOldest ? oldestQueued(cx, over) : [];
  if (over > dropped.length) {
    throw new StoreError("queue_full", `queue depth ${activeDepth} + ${items.length} would exceed max_depth ${maxDepth}`);
  }
  // What drop_oldest removes is freed before the batch is stored.
  const freedBytes = dropped.reduce((sum, row) => sum + row.retainedBytes, 0);
  guard.admit(items.length - dropped.length, items.reduce((sum, item) => sum + retainedBytesOf(item), 0) - freedBytes);
  for (const row of dropped) table.delete(row);
  const nowMs = cx.clock.now();
  for (const item of items) {
    table.insert({
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
    });
  }
  cx.ready.notifyStored(items, nowMs);
  return dropped.length;
}

/**
 * The `count` oldest queued rows (received_at, then id), or fewer when fewer are queued: one pass
 * keeping the oldest seen so far in order, as a batch usually needs one or a few.
 */
function oldestQueued(cx: MemoryContext, count: number): Row[] {
  const oldest: Row[] = [];
  for (const row of cx.table.rows.values()) {
    if (row.state !== "queued") continue;
    if (oldest.length === count && oldestFirst(row, oldest[count - 1]) >= 0) continue;
    let at = oldest.length;
    while (at > 0 && oldestFirst(row, oldest[at - 1]) < 0) at--;
    oldest.splice(at, 0, row);
    if (oldest.length > count) oldest.pop();
  }
  return oldest;
}
