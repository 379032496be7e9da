// The memory backend refuses new messages before it grows past its retained-items / retained-bytes
// limits (503 memory_pressure) and reports the numbers /healthz?details=1 shows.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { StoreError } from "../../runtime/store/store.js";
import { message } from "./contract.js";

const test = suite("memory guard");

test("the retained-items guard refuses a batch whole and counts the rejection", async () => {
  const store = await openStore({ backend: "memory", memoryMaxRetainedItems: 3 }, { clock: new TestClock() });
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
  const store = await openStore({ backend: "memory", memoryMaxRetainedBytes: 10_000 }, { clock: new TestClock() });
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
  const store = await openStore({ backend: "memory", maxDepth: 2, dropOldest: true, memoryMaxRetainedItems: 2 }, { clock: new TestClock() });
  await store.enqueue([message("a"), message("b")]);
  await store.enqueue([message("c")]);
  assert.equal((await store.listMessages({ limit: 10 })).map((v) => v.id).sort(), ["b", "c"]);
  assert.is(store.memoryStats()!.memoryPressure.rejectedTotal, 0);
  await store.close();
});

test.run();
