// The in-process memory of settled leases (runtime/store/settled-leases.ts) that makes a repeated
// ack or nack succeed (docs/decisions.md D19): what it remembers, for how long, and its bound.
// The store-level behaviour (a repeated ack answers success) is in the contract suite; this pins the
// bookkeeping beneath it, which was rewritten from one trimmed Map to two generations.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { SettledLeases } from "../../runtime/store/settled-leases.js";
import { SETTLED_LEASE_MEMORY_MS } from "../../runtime/store/store.js";

test("a settled lease is remembered with its kind within the window, and forgotten after it", () => {
  const settled = new SettledLeases();
  settled.remember("lease_a", "ack", 1_000);
  settled.remember("lease_b", "nack", 1_000);
  assert.is(settled.lookup("lease_a", 1_000 + SETTLED_LEASE_MEMORY_MS - 1), "ack");
  assert.is(settled.lookup("lease_b", 1_000 + SETTLED_LEASE_MEMORY_MS - 1), "nack");
  assert.is(settled.lookup("lease_unknown", 1_000), undefined);
  assert.is(settled.lookup("lease_a", 1_000 + SETTLED_LEASE_MEMORY_MS), undefined);
  assert.is(settled.size, 0, "entries past the window are released, not only hidden");
});

test("an entry outlives the window of older entries in its generation only by its own age", () => {
  const settled = new SettledLeases();
  settled.remember("old", "ack", 0);
  settled.remember("new", "ack", SETTLED_LEASE_MEMORY_MS - 10);
  // Same generation: the old one is past the window, the new one is not.
  assert.is(settled.lookup("old", SETTLED_LEASE_MEMORY_MS + 5), undefined);
  assert.is(settled.lookup("new", SETTLED_LEASE_MEMORY_MS + 5), "ack");
});

test("memory is bounded by the capacity, and the newest half of it is always kept", () => {
  const capacity = 100;
  const settled = new SettledLeases(capacity);
  for (let i = 0; i < 1_000; i++) {
    settled.remember(`lease_${i}`, i % 2 ? "nack" : "ack", 5_000);
    assert.ok(settled.size <= capacity, `size ${settled.size} after ${i + 1} settles exceeds ${capacity}`);
  }
  for (let i = 1_000 - capacity / 2; i < 1_000; i++) assert.is(settled.lookup(`lease_${i}`, 5_000), i % 2 ? "nack" : "ack", `lease_${i}`);
  assert.is(settled.lookup("lease_0", 5_000), undefined, "the oldest are evicted");
});

test("a lease settled again is found with its latest kind after its generation rotates", () => {
  const settled = new SettledLeases(4);
  settled.remember("x", "nack", 10);
  settled.remember("y", "ack", 10);
  settled.remember("x", "ack", 11); // rotates: x's nack is now in the previous generation
  assert.is(settled.lookup("x", 12), "ack");
  assert.is(settled.lookup("y", 12), "ack");
});

test.run();
