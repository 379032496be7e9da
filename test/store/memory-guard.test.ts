// The memory backend refuses new messages before it grows past its retained-items / retained-bytes
// limits (503 memory_pressure) and reports the numbers /healthz?details=1 shows.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import { MemoryGuard } from "../../runtime/store/memory/guard.js";
import { MessageTable } from "../../runtime/store/memory/table.js";
import { noopObserver } from "../../runtime/store/observer.js";
import { openStore, type StoreSpec } from "../../runtime/store/open.js";
import type { MemoryStoreStats } from "../../runtime/store/reports.js";
import { StoreError } from "../../runtime/store/store.js";
import { message } from "./contract.js";

const test = suite("memory guard");

/** A memory store with its footprint reader (which the backend hands its observer at open) as memoryStats(). */
async function openMemory(spec: StoreSpec) {
  let read: (() => MemoryStoreStats) | undefined;
  const observer = { ...noopObserver, memoryStats: (reader: () => MemoryStoreStats) => void (read = reader) };
  const store = await openStore(spec, { clock: new TestClock(), observer });
  return Object.assign(store, { memoryStats: () => read!() });
}

test("the retained-items guard refuses a batch whole and counts the rejection", async () => {
  const store = await openMemory({ backend: "memory", memoryMaxRetainedItems: 3 });
  await store.enqueue([message("a"), message("b")]);
  const error = await store.enqueue([message("c"), message("d")]).catch((e: StoreError) => e);
  assert.instance(error, StoreError);
  assert.is((error as StoreError).code, "memory_pressure");
  assert.equal((await store.listMessages({ limit: 10 })).map((v) => v.id).sort(), ["a", "b"]);
  await store.enqueue([message("c")]);
  const stats = store.memoryStats()!;
  assert.is(stats.backend, "memory");
  assert.equal(stats.itemsByState, { queued: 3, leased: 0, delivered: 0, dead: 0, canceled: 0 });
  assert.is(stats.memoryPressure.active, true);
  assert.is(stats.memoryPressure.reason, "retained_items");
  assert.is(stats.memoryPressure.rejectedTotal, 1);
  assert.is(stats.memoryPressure.retainedItemLimit, 3);
  await store.close();
});

test("the retained-bytes guard counts payload and headers and frees room when messages leave", async () => {
  const store = await openMemory({ backend: "memory", memoryMaxRetainedBytes: 10_000 });
  await store.enqueue([message("big", { payload: new Uint8Array(6000) })]);
  const before = store.memoryStats()!.retainedBytesTotal;
  assert.ok(before > 6000);
  const error = await store.enqueue([message("too-big", { payload: new Uint8Array(6000) })]).catch((e: StoreError) => e);
  assert.is((error as StoreError).code, "memory_pressure");
  // Short of the limit, but refusing what arrives: the pressure is on until something leaves.
  assert.equal([store.memoryStats()!.memoryPressure.active, store.memoryStats()!.memoryPressure.reason], [true, "retained_bytes"]);
  const [lease] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 1000 });
  assert.is(store.memoryStats()!.retainedBytesByState.leased, before);
  await store.ack([lease.leaseId]);
  assert.is(store.memoryStats()!.retainedBytesTotal, 0);
  assert.is(store.memoryStats()!.memoryPressure.active, false, "room was freed since the refusal");
  await store.enqueue([message("fits-now", { payload: new Uint8Array(6000) })]);
  assert.is(store.memoryStats()!.memoryPressure.active, false);
  await store.close();
});

test("under drop_oldest the guard counts what the removal frees", async () => {
  const store = await openMemory({ backend: "memory", maxDepth: 2, dropOldest: true, memoryMaxRetainedItems: 2 });
  await store.enqueue([message("a"), message("b")]);
  await store.enqueue([message("c")]);
  assert.equal((await store.listMessages({ limit: 10 })).map((v) => v.id).sort(), ["b", "c"]);
  assert.is(store.memoryStats()!.memoryPressure.rejectedTotal, 0);
  await store.close();
});

test("the heap V8 actually uses is watched too: past 80% of its old-generation room new messages are refused, whatever the estimate", () => {
  // A 256 MiB heap limit holds 192 MiB of old generation; 80% of it is 153.6 MiB.
  const MiB = 1024 * 1024;
  let used = 100;
  let now = 0;
  const guard = new MemoryGuard(new MessageTable(), { memoryMaxRetainedBytes: 1_000_000 }, () => ({ used: used * MiB, limit: 256 * MiB }), () => now);
  guard.admit(1, 100);
  used = 160;
  guard.admit(1, 100); // read at most every 50 ms: the last reading stands
  now = 50;
  const error = (() => {
    try {
      guard.admit(1, 100);
    } catch (caught) {
      return caught as StoreError;
    }
    return undefined;
  })();
  assert.is(error?.code, "memory_pressure");
  assert.match(error!.message, "heap limit");
  assert.equal([guard.stats().memoryPressure.active, guard.stats().memoryPressure.reason], [true, "heap_used"]);
  used = 150;
  now = 100;
  guard.admit(1, 100);
  assert.is(guard.stats().memoryPressure.active, false);
});

test.run();
