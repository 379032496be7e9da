// Enqueue on the memory backend: the whole batch is checked (ids, max_depth, footprint guard) before
// any row is stored, so a refused batch changes nothing.
import { positiveOrNull } from "../options.js";
import { StoreError, type NewMessage } from "../store.js";
import { retainedBytesOf, validateEnqueueBatch } from "../validate.js";
import type { MemoryContext } from "./context.js";
import type { MemoryGuard } from "./guard.js";

export function enqueue(cx: MemoryContext, guard: MemoryGuard, items: readonly NewMessage[]): void {
  const { table, limits } = cx;
  validateEnqueueBatch(items);
  items.forEach((item, index) => {
    if (table.get(item.id)) throw new StoreError("duplicate_id", `message id ${item.id} already exists`, index);
  });
  const maxDepth = positiveOrNull(limits.maxDepth);
  const activeDepth = table.countByState.queued + table.countByState.leased;
  if (maxDepth !== null && activeDepth + items.length > maxDepth) {
    throw new StoreError("queue_full", `queue depth ${activeDepth} + ${items.length} would exceed max_depth ${maxDepth}`);
  }
  guard.admit(items.length, items.reduce((sum, item) => sum + retainedBytesOf(item), 0));
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
}
