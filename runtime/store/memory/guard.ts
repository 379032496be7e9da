// The memory backend's retained-footprint guard (DECISIONS.md "Storage"): new messages are refused
// with memory_pressure before the process runs out of memory, and /healthz?details=1 reports the
// footprint and the guard's state (memoryStats).
import { positiveOrNull, type StoreLimits } from "../options.js";
import { StoreError, type MemoryStoreStats } from "../store.js";
import type { MessageTable } from "./table.js";

export class MemoryGuard {
  private rejectedTotal = 0;
  private lastPressureReason = "";
  /**
   * The footprint when the last admission was refused; cleared by the next admission that passes.
   * While nothing has left since, the pressure is still on, although the store may be short of its
   * limits (the refused batch was larger than the room left).
   */
  private refusedAt: { items: number; bytes: number } | null = null;

  constructor(
    private readonly table: MessageTable,
    private readonly limits: StoreLimits,
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
        : `memory store retains ${retainedBytes} bytes; limit ${bytesLimit}`,
    );
  }

  stats(): MemoryStoreStats {
    const itemLimit = positiveOrNull(this.limits.memoryMaxRetainedItems);
    const bytesLimit = positiveOrNull(this.limits.memoryMaxRetainedBytes);
    const retainedBytesTotal = this.table.retainedBytesTotal();
    let reason = "";
    if (itemLimit !== null && this.table.size >= itemLimit) reason = "retained_items";
    else if (bytesLimit !== null && retainedBytesTotal >= bytesLimit) reason = "retained_bytes";
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
