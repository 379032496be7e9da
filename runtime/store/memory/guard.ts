// The memory backend's retained-footprint guard (docs/decisions.md D46): new messages are refused
// with memory_pressure before the process runs out of memory, and /healthz?details=1 reports the
// footprint and the guard's state (StoreObserver.memoryStats).
import { getHeapStatistics } from "node:v8";
import { positiveOrNull, type StoreLimits } from "../options.js";
import type { MemoryStoreStats } from "../reports.js";
import { StoreError } from "../store.js";
import type { MessageTable } from "./table.js";

/**
 * The second line of the guard: the heap V8 actually uses. The retained-bytes estimate counts what
 * a message holds, not what V8 spends on holding it (a small message with many headers costs several
 * times its text in objects and strings), so past this share of the heap limit a new message is
 * refused whatever the estimate says. Read at most every HEAP_CHECK_MS: a read costs microseconds.
 */
const HEAP_USED_SHARE = 0.8;
const HEAP_CHECK_MS = 50;
/**
 * V8's heap limit includes the young generation's reservation (about 50 MiB here), which old objects,
 * such as stored messages, never get: with `--max-old-space-size=64` the limit reads 117 MB and the
 * process dies near 64. The share is taken of the limit without it.
 */
const YOUNG_GENERATION_RESERVE = 64 * 1024 * 1024;

export class MemoryGuard {
  private rejectedTotal = 0;
  private lastPressureReason = "";
  /**
   * The footprint when the last admission was refused; cleared by the next admission that passes.
   * While nothing has left since, the pressure is still on, although the store may be short of its
   * limits (the refused batch was larger than the room left).
   */
  private refusedAt: { items: number; bytes: number } | null = null;

  private heapCheckedAtMs = -Infinity;
  private heapFull = false;

  constructor(
    private readonly table: MessageTable,
    private readonly limits: StoreLimits,
    /** Used and limit of the V8 heap, in bytes; read only while a retained-bytes limit is set. */
    private readonly heap: () => { used: number; limit: number } = () => {
      const stats = getHeapStatistics();
      return { used: stats.used_heap_size, limit: stats.heap_size_limit };
    },
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  /** Throws memory_pressure when `itemCount` more items of `batchBytes` would pass a limit. */
  admit(itemCount: number, batchBytes: number): void {
    const itemLimit = positiveOrNull(this.limits.memoryMaxRetainedItems);
    const bytesLimit = positiveOrNull(this.limits.memoryMaxRetainedBytes);
    const retainedItems = this.table.size;
    const retainedBytes = this.table.retainedBytesTotal();
    let reason = "";
    if (itemLimit !== null && retainedItems + itemCount > itemLimit) reason = "retained_items";
    else if (bytesLimit !== null && retainedBytes + batchBytes > bytesLimit) reason = "retained_bytes";
    else if (bytesLimit !== null && this.heapNearlyFull()) reason = "heap_used";
    if (reason === "") {
      this.refusedAt = null;
      return;
    }
    this.rejectedTotal++;
    this.lastPressureReason = reason;
    this.refusedAt = { items: retainedItems, bytes: retainedBytes };
    throw new StoreError(
      "memory_pressure",
      reason === "retained_items"
        ? `memory store holds ${retainedItems} items; limit ${itemLimit}`
        : reason === "heap_used"
          ? `the process uses more than ${Math.round(HEAP_USED_SHARE * 100)}% of its heap limit`
          : `memory store retains ${retainedBytes} bytes; limit ${bytesLimit}`,
    );
  }

  private heapNearlyFull(): boolean {
    const now = this.nowMs();
    if (now - this.heapCheckedAtMs >= HEAP_CHECK_MS) {
      const { used, limit } = this.heap();
      this.heapFull = used > HEAP_USED_SHARE * Math.max(limit - YOUNG_GENERATION_RESERVE, limit / 4);
      this.heapCheckedAtMs = now;
    }
    return this.heapFull;
  }

  stats(): MemoryStoreStats {
    const itemLimit = positiveOrNull(this.limits.memoryMaxRetainedItems);
    const bytesLimit = positiveOrNull(this.limits.memoryMaxRetainedBytes);
    const retainedBytesTotal = this.table.retainedBytesTotal();
    let reason = "";
    if (itemLimit !== null && this.table.size >= itemLimit) reason = "retained_items";
    else if (bytesLimit !== null && retainedBytesTotal >= bytesLimit) reason = "retained_bytes";
    else if (bytesLimit !== null && this.heapFull) reason = "heap_used";
    else if (this.refusedAt && this.table.size >= this.refusedAt.items && retainedBytesTotal >= this.refusedAt.bytes) reason = this.lastPressureReason;
    return {
      backend: "memory",
      itemsByState: { ...this.table.countByState },
      retainedBytesByState: { ...this.table.bytesByState },
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
}
