// The dispatcher's adapter to the real Store (runtime/delivery/store-queue.ts) on a real SQLite file:
// settles made in the same moment share one store write, every caller's promise follows that write,
// and a late ack is reported as a lease conflict.
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import type { AttemptRecord, DeliveryQueue } from "../../runtime/delivery/queue.js";
import { storeDeliveryQueue } from "../../runtime/delivery/store-queue.js";
import { openStore } from "../../runtime/store/open.js";
import type { LeaseConflict } from "../../runtime/store/records.js";
import type { Store } from "../../runtime/store/store.js";
import { makeTempDir } from "../helpers/temp-dir.js";

const route = "/orders";
const target = "https://receiver.example/in";

interface Harness {
  store: Store;
  queue: DeliveryQueue;
  clock: TestClock;
  calls: { ack: string[][]; recordAttempts: number[] };
  conflicts: LeaseConflict[][];
  close(): Promise<void>;
}

async function harness(): Promise<Harness> {
  const temp = makeTempDir("store-queue");
  const clock = new TestClock(Date.UTC(2026, 0, 1));
  const store = await openStore({ backend: "sqlite", sqlitePath: join(temp.path, "spool.db") }, { clock });
  const calls = { ack: [] as string[][], recordAttempts: [] as number[] };
  const ack = store.ack.bind(store);
  store.ack = (leaseIds, scope) => {
    calls.ack.push([...leaseIds]);
    return ack(leaseIds, scope);
  };
  const recordAttempts = store.recordAttempts.bind(store);
  store.recordAttempts = (attempts) => {
    calls.recordAttempts.push(attempts.length);
    return recordAttempts(attempts);
  };
  const conflicts: LeaseConflict[][] = [];
  const queue = storeDeliveryQueue(store, clock, { onLeaseConflict: (found) => conflicts.push([...found]) });
  return {
    store,
    queue,
    clock,
    calls,
    conflicts,
    close: async () => {
      await store.close();
      temp.cleanup();
    },
  };
}

async function enqueueAndLease(h: Harness, count: number) {
  await h.store.enqueue(Array.from({ length: count }, (_, i) => ({ id: `evt_${i}`, route, target, payload: Buffer.from(`body ${i}`), headers: {} })));
  return h.queue.dequeue({ route, target, batch: count, leaseTtlMs: 30_000 }, new AbortController().signal);
}

function acked(eventId: string, attempt = 1): AttemptRecord {
  return { eventId, route, target, attempt, statusCode: 200, outcome: "acked" };
}

const test = suite("store delivery queue");

test("attempt records and acks issued in the same moment are written by one store call each", async () => {
  const h = await harness();
  try {
    const leased = await enqueueAndLease(h, 5);
    assert.is(leased.length, 5);
    await Promise.all(leased.map((item) => Promise.all([h.queue.recordAttempt(acked(item.id)), h.queue.ack([item.leaseId])])));
    assert.equal(h.calls.recordAttempts, [5]);
    assert.equal(h.calls.ack, [leased.map((item) => item.leaseId)]);
    // Resolved means written: the messages are gone and the attempts are listed.
    assert.equal(await h.store.listMessages({ route, limit: 10 }), []);
    const attempts = await h.store.listAttempts({ route, limit: 10 });
    assert.equal(attempts.map((a) => a.messageId).sort(), leased.map((item) => item.id).sort());
    assert.equal(h.conflicts, []);
  } finally {
    await h.close();
  }
});

test("settles issued in different moments are separate writes", async () => {
  const h = await harness();
  try {
    const [first, second] = await enqueueAndLease(h, 2);
    await h.queue.ack([first.leaseId]);
    await h.queue.ack([second.leaseId]);
    assert.equal(h.calls.ack, [[first.leaseId], [second.leaseId]]);
  } finally {
    await h.close();
  }
});

test("a failed group write rejects every caller in the group, and the leases stay for a later settle", async () => {
  const h = await harness();
  try {
    const leased = await enqueueAndLease(h, 3);
    const realAck = h.store.ack;
    h.store.ack = async () => {
      throw new Error("disk on fire");
    };
    const results = await Promise.allSettled(leased.map((item) => h.queue.ack([item.leaseId])));
    assert.equal(
      results.map((r) => r.status === "rejected" && (r.reason as Error).message),
      ["disk on fire", "disk on fire", "disk on fire"],
    );
    h.store.ack = realAck;
    assert.is((await h.store.listMessages({ route, state: "leased", limit: 10 })).length, 3);
    await Promise.all(leased.map((item) => h.queue.ack([item.leaseId])));
    assert.equal(await h.store.listMessages({ route, limit: 10 }), []);
  } finally {
    await h.close();
  }
});

test("an ack after the lease ran out is reported as a lease conflict, the message stays queued", async () => {
  const h = await harness();
  try {
    const [item] = await enqueueAndLease(h, 1);
    h.clock.advance(31_000);
    await h.queue.ack([item.leaseId]);
    assert.equal(h.conflicts, [[{ leaseId: item.leaseId, reason: "lease_expired" }]]);
    const [message] = await h.store.listMessages({ route, limit: 10 });
    assert.is(message.state, "queued");
  } finally {
    await h.close();
  }
});

test.run();
