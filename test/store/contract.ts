// The one Store contract suite, run unchanged against memory, SQLite and PostgreSQL
// (test/store/{memory,sqlite,postgres}.test.ts). Each test gets a fresh store and a TestClock.
import { suite, type Test } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import type { StoreObserver } from "../../runtime/store/observer.js";
import type { StoreOptions } from "../../runtime/store/options.js";
import type { NewMessage } from "../../runtime/store/records.js";
import { StoreError, type Store } from "../../runtime/store/store.js";

export type OpenFreshStore = (clock: TestClock, options: StoreOptions, observer: StoreObserver) => Promise<Store>;

/** What the store reported to its observer during a test. */
interface Heard {
  /** observer.dropped calls, in order. */
  dropped: number[];
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;

export function bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

export function message(id: string, overrides: Partial<NewMessage> = {}): NewMessage {
  return { id, route: "/orders", target: "pull", payload: bytes(`body of ${id}`), headers: { "content-type": "application/json" }, ...overrides };
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<StoreError> {
  try {
    await promise;
  } catch (error) {
    assert.instance(error, StoreError);
    assert.is((error as StoreError).code, code);
    return error as StoreError;
  }
  assert.unreachable(`expected StoreError ${code}, but the call succeeded`);
  throw new Error("unreachable");
}

async function stateOf(store: Store, id: string): Promise<string | undefined> {
  const [view] = await store.getMessages([id]);
  return view?.state;
}

/** Counts a test file reports when the backend is unavailable (kept in sync by the suite itself). */
export let contractTestCount = 0;

export function storeContract(name: string, openFresh: OpenFreshStore): Test {
  const contract = suite(`store contract: ${name}`);
  const it = (title: string, options: StoreOptions, body: (store: Store, clock: TestClock, heard: Heard) => Promise<void>) => {
    contractTestCount++;
    contract(title, async () => {
      const clock = new TestClock();
      const heard: Heard = { dropped: [] };
      const observer: StoreObserver = { operation() {}, sqliteEvent() {}, dropped: (messages) => void heard.dropped.push(messages) };
      const store = await openFresh(clock, options, observer);
      try {
        await body(store, clock, heard);
      } finally {
        await store.close();
      }
    });
  };

  it("dequeue leases ready messages in next_run_at then received_at order with attempt 1", {}, async (store, clock) => {
    const now = clock.now();
    await store.enqueue([
      message("late", { receivedAtMs: now - 1000, nextRunAtMs: now - 10 }),
      message("early", { receivedAtMs: now - 500, nextRunAtMs: now - 20 }),
      message("tie-newer", { receivedAtMs: now - 100, nextRunAtMs: now - 10 }),
    ]);
    const leased = await store.dequeue({ route: "/orders", batch: 10, leaseTtlMs: 30 * SECOND });
    assert.equal(leased.map((m) => m.id), ["early", "late", "tie-newer"]);
    for (const m of leased) {
      assert.is(m.attempt, 1);
      assert.is(m.leaseUntilMs, now + 30 * SECOND);
      // Opaque: `lease_` and 16 random hex; a backend may append more (SQLite appends the row's rowid).
      assert.match(m.leaseId, /^lease_[0-9a-f]{16}[0-9a-z_]*$/);
    }
    assert.is(new Set(leased.map((m) => m.leaseId)).size, 3);
  });

  it("dequeue leases and hides the item from other consumers", {}, async (store) => {
    await store.enqueue([message("only")]);
    const first = await store.dequeue({ route: "/orders", batch: 5, leaseTtlMs: 30 * SECOND });
    const second = await store.dequeue({ route: "/orders", batch: 5, leaseTtlMs: 30 * SECOND });
    assert.is(first.length, 1);
    assert.is(second.length, 0);
    assert.is(await stateOf(store, "only"), "leased");
  });

  // PostgreSQL leases the dequeues that wait behind a running one with one statement: the second
  // and third here, whose rows and lease times must still be their own.
  it("dequeues made at the same moment each get their own messages in order, with their own lease ttl", {}, async (store, clock) => {
    const now = clock.now();
    await store.enqueue(Array.from({ length: 9 }, (_, i) => message(`m${i}`, { receivedAtMs: now - 100 + i })));
    const [first, second, third, fourth] = await Promise.all([
      store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: 10 * SECOND }),
      store.dequeue({ route: "/orders", batch: 3, leaseTtlMs: 20 * SECOND }),
      store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 30 * SECOND }),
      store.dequeue({ route: "/orders", batch: 5, leaseTtlMs: 40 * SECOND }),
    ]);
    assert.equal([first, second, third, fourth].map((leased) => leased.map((m) => m.id)), [["m0", "m1"], ["m2", "m3", "m4"], ["m5"], ["m6", "m7", "m8"]]);
    [first, second, third, fourth].forEach((leased, i) => {
      for (const m of leased) assert.is(m.leaseUntilMs, now + (i + 1) * 10 * SECOND, `lease_until of ${m.id}`);
    });
    // Each lease runs out at its own time.
    clock.advance(10 * SECOND + 1);
    assert.equal((await store.dequeue({ route: "/orders", batch: 10, leaseTtlMs: 60 * SECOND })).map((m) => m.id), ["m0", "m1"]);
    clock.advance(10 * SECOND);
    assert.equal((await store.dequeue({ route: "/orders", batch: 10, leaseTtlMs: 60 * SECOND })).map((m) => m.id), ["m2", "m3", "m4"]);
    const outcome = await store.ack([...third, ...fourth].map((m) => m.leaseId));
    assert.is(outcome.settled.length, 4);
    assert.equal(outcome.conflicts, []);
  });

  // PostgreSQL scans a draining backlog from its last batch's start (a floor): a message ready below
  // it must still be found when dequeues leased together come back short.
  it("dequeues made at the same moment during a backlog still find a message ready before the backlog's start", {}, async (store, clock) => {
    const now = clock.now();
    await store.enqueue(Array.from({ length: 10 }, (_, i) => message(`m${i}`, { receivedAtMs: now - 100 + i, nextRunAtMs: now - 100 + i })));
    assert.is((await store.dequeue({ route: "/orders", batch: 4, leaseTtlMs: MINUTE })).length, 4);
    await store.enqueue([message("below", { receivedAtMs: now - 1000, nextRunAtMs: now - 1000 })]);
    const got = await Promise.all([1, 6, 6].map((batch) => store.dequeue({ route: "/orders", batch, leaseTtlMs: MINUTE })));
    assert.equal(got.flat().map((m) => m.id).sort(), ["below", "m4", "m5", "m6", "m7", "m8", "m9"]);
  });

  // PostgreSQL settles the acks (and nacks) that wait behind a running one with one statement.
  it("acks and nacks made at the same moment each report only their own leases", {}, async (store) => {
    await store.enqueue(Array.from({ length: 8 }, (_, i) => message(`m${i}`)));
    const l = (await store.dequeue({ route: "/orders", batch: 8, leaseTtlMs: MINUTE })).map((m) => m.leaseId);
    const unknown = "lease_00000000000000ff_999999";
    const [a, b, c] = await Promise.all([store.ack([l[0], l[1]]), store.ack([l[2], unknown]), store.ack([l[3]])]);
    assert.equal([a.settled, a.conflicts], [[l[0], l[1]], []]);
    assert.equal([b.settled, b.conflicts], [[l[2]], [{ leaseId: unknown, reason: "lease_not_found" }]]);
    assert.equal([c.settled, c.conflicts], [[l[3]], []]);
    // The same lease acked twice at once: both succeed.
    const [d, e, f] = await Promise.all([store.ack([l[4]]), store.ack([l[5]]), store.ack([l[5]])]);
    assert.equal([d.settled, e.settled, f.settled], [[l[4]], [l[5]], [l[5]]]);
    assert.equal([...d.conflicts, ...e.conflicts, ...f.conflicts], []);
    // One of the two is the settlement, the other its repeat (counted once by the metrics).
    assert.equal([d.repeated ?? [], e.repeated ?? [], f.repeated ?? []], [[], [], [l[5]]]);
    const [g, h, i] = await Promise.all([store.nack([l[6]], { delayMs: 0 }), store.nack([l[7]], { delayMs: 0 }), store.nack([l[0]], { delayMs: 0 })]);
    assert.equal([g.settled, h.settled, i.settled], [[l[6]], [l[7]], []]);
    assert.equal(i.conflicts.map((x) => x.leaseId), [l[0]]);
    assert.equal((await store.listMessages({ limit: 10 })).map((v) => [v.id, v.state]).sort(), [["m6", "queued"], ["m7", "queued"]]);
  });

  it("payload bytes, headers and trace context round-trip", {}, async (store, clock) => {
    const payload = new Uint8Array([0, 255, 10, 13, 128]);
    await store.enqueue([message("binary", { payload, headers: { "x-a": "1", "content-type": "application/octet-stream" }, trace: { traceparent: "00-abc-def-01" }, receivedAtMs: clock.now() - 5 })]);
    const [leased] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: SECOND });
    assert.equal([...leased.payload], [...payload]);
    assert.equal(leased.headers, { "x-a": "1", "content-type": "application/octet-stream" });
    assert.equal(leased.trace, { traceparent: "00-abc-def-01" });
    assert.is(leased.receivedAtMs, clock.now() - 5);
    assert.is(leased.target, "pull");
    const [view] = await store.listMessages({ limit: 10, includePayload: true, includeHeaders: true, includeTrace: true });
    assert.equal([...view.payload!], [...payload]);
    assert.equal(view.trace, { traceparent: "00-abc-def-01" });
  });

  it("a leased message's base64 payload and stored header and trace text, where a store gives them, say what its decoded fields say", {}, async (store) => {
    // 300 bytes: more than the 57 a line of PostgreSQL's base64 holds.
    const long = new Uint8Array(Array.from({ length: 300 }, (_, i) => (i * 37) % 256));
    const headers = { "x-z-first": 'say "hi"\\', "content-type": "application/octet-stream", "x-a": "ü \u2028" };
    await store.enqueue([
      message("long", { payload: long, headers, trace: { traceparent: "00-abc-def-01", path: "/p" } }),
      message("empty", { payload: new Uint8Array(0), headers: {}, trace: null }),
    ]);
    const leased = await store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: SECOND });
    assert.equal(leased.map((m) => m.id).sort(), ["empty", "long"]);
    for (const m of leased) {
      const sent = m.id === "long" ? long : new Uint8Array(0);
      if (m.payloadB64 !== undefined) assert.is(m.payloadB64, Buffer.from(sent).toString("base64"), m.id);
      assert.equal([...m.payload], [...sent], m.id);
      if (m.headersJson !== undefined) {
        // The text as stored: the sender's order, and the same object the decoded field holds.
        assert.equal(JSON.parse(m.headersJson), m.headers, m.id);
        assert.equal(Object.keys(JSON.parse(m.headersJson) as object), Object.keys(m.id === "long" ? headers : {}), m.id);
      }
      if (m.traceJson !== undefined) assert.equal(m.traceJson === null ? null : JSON.parse(m.traceJson), m.trace, m.id);
      assert.equal(m.headers, m.id === "long" ? headers : {}, m.id);
      assert.equal(m.trace, m.id === "long" ? { traceparent: "00-abc-def-01", path: "/p" } : null, m.id);
    }
  });

  it("one group of text, multibyte, binary, NUL-holding and empty payloads stores each message's own bytes", {}, async (store) => {
    // PostgreSQL writes a group's payloads as one blob, as text when they are all UTF-8 without NUL.
    const payloads: Record<string, Uint8Array> = {
      json: bytes('{"a":"quote \\" and \\\\ backslash"}'),
      multibyte: bytes("héllo ✓ 𝄞 \u2028 end"),
      empty: new Uint8Array(0),
      nul: bytes("before\u0000after"),
      invalid: new Uint8Array([0xc3, 0x28, 0xff, 0x41]),
      tail: bytes("last"),
    };
    const headers = { "x-quote": 'say "hi"\\', "x-z-first": "1", "x-a": "ü" };
    const ids = Object.keys(payloads);
    // Concurrent callers share a group; then all in one call; then the UTF-8 ones alone (the text path).
    await Promise.all(ids.map((id) => store.enqueue([message(`c-${id}`, { payload: payloads[id], headers })])));
    await store.enqueue(ids.map((id) => message(`b-${id}`, { payload: payloads[id], trace: { path: `/${id}` } })));
    await store.enqueue(["json", "multibyte", "empty", "tail"].map((id) => message(`t-${id}`, { payload: payloads[id] })));
    const views = await store.getMessages([...ids.flatMap((id) => [`c-${id}`, `b-${id}`]), "t-json", "t-multibyte", "t-empty", "t-tail"], { payload: true, headers: true, trace: true });
    for (const view of views) {
      const id = view.id.slice(2);
      assert.equal([...view.payload!], [...payloads[id]], view.id);
      if (view.id.startsWith("c-")) assert.equal(Object.entries(view.headers!), Object.entries(headers), view.id);
      if (view.id.startsWith("b-")) assert.equal(view.trace, { path: `/${id}` }, view.id);
    }
    assert.is(views.length, ids.length * 2 + 4);
  });

  it("headers keep the order they arrived in (a dequeue and a list show the request as captured)", {}, async (store) => {
    // Longest name first: PostgreSQL's jsonb would hand them back shortest first.
    const headers = { "x-github-delivery": "1", "user-agent": "GitHub-Hookshot", host: "hooks.example", accept: "*/*", "content-type": "application/json" };
    await store.enqueue([message("ordered", { headers })]);
    const [leased] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: SECOND });
    assert.equal(Object.keys(leased.headers), Object.keys(headers));
    const [view] = await store.listMessages({ limit: 10, includeHeaders: true });
    assert.equal(Object.keys(view.headers!), Object.keys(headers));
  });

  it("dequeue by target leaves other targets and routes untouched", {}, async (store) => {
    await store.enqueue([
      message("a-pull", { target: "https://a.example/in" }),
      message("b-pull", { target: "https://b.example/in" }),
      message("other-route", { route: "/other" }),
    ]);
    const leased = await store.dequeue({ route: "/orders", target: "https://b.example/in", batch: 10, leaseTtlMs: SECOND });
    assert.equal(leased.map((m) => m.id), ["b-pull"]);
    assert.is(await stateOf(store, "a-pull"), "queued");
    assert.is(await stateOf(store, "other-route"), "queued");
    const rest = await store.dequeue({ route: "/orders", batch: 10, leaseTtlMs: SECOND });
    assert.equal(rest.map((m) => m.id), ["a-pull"]);
  });

  it("enqueue batch with one duplicate stores nothing", {}, async (store) => {
    await store.enqueue([message("existing", { payload: bytes("original") })]);
    const error = await rejectsWith(store.enqueue([message("new-1"), message("existing", { payload: bytes("replacement") }), message("new-2")]), "duplicate_id");
    assert.is(error.itemIndex, 1);
    const views = await store.listMessages({ limit: 100, includePayload: true });
    assert.equal(views.map((v) => v.id), ["existing"]);
    assert.is(new TextDecoder().decode(views[0].payload), "original");
  });

  it("enqueue batch repeating an id within itself stores nothing", {}, async (store) => {
    const error = await rejectsWith(store.enqueue([message("twice"), message("twice")]), "duplicate_id");
    assert.is(error.itemIndex, 1);
    assert.equal(await store.listMessages({ limit: 10 }), []);
  });

  it("oversized or malformed batches are refused and store nothing", {}, async (store) => {
    const big = Array.from({ length: 1001 }, (_, i) => message(`big-${i}`));
    await rejectsWith(store.enqueue(big), "invalid_argument");
    const error = await rejectsWith(store.enqueue([message("fine"), message("bad-route", { route: "no-slash" })]), "invalid_argument");
    assert.is(error.itemIndex, 1);
    await rejectsWith(store.dequeue({ route: "/orders", batch: 0, leaseTtlMs: SECOND }), "invalid_argument");
    assert.equal(await store.listMessages({ limit: 10 }), []);
  });

  it("a refused batch in a shared commit does not fail its neighbours", {}, async (store) => {
    await store.enqueue([message("taken")]);
    const results = await Promise.allSettled([
      store.enqueue([message("left")]),
      store.enqueue([message("new-in-bad-batch"), message("taken")]),
      store.enqueue([message("right-1"), message("right-2")]),
    ]);
    assert.equal(results.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
    assert.is(((results[1] as PromiseRejectedResult).reason as StoreError).code, "duplicate_id");
    assert.equal((await store.getMessages(["taken", "left", "new-in-bad-batch", "right-1", "right-2"])).map((v) => v.id), ["taken", "left", "right-1", "right-2"]);
  });

  it("max_depth in a shared commit admits whole batches until the limit", { maxDepth: 3 }, async (store) => {
    const results = await Promise.allSettled([
      store.enqueue([message("first-1"), message("first-2")]),
      store.enqueue([message("second-1"), message("second-2")]),
      store.enqueue([message("third-1")]),
    ]);
    assert.equal(results.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
    assert.is(((results[1] as PromiseRejectedResult).reason as StoreError).code, "queue_full");
    assert.equal((await store.listMessages({ limit: 10 })).map((v) => v.id).sort(), ["first-1", "first-2", "third-1"]);
  });

  it("max_depth admission counts queued and leased, refuses a whole batch, and frees room on ack", { maxDepth: 3 }, async (store) => {
    await store.enqueue([message("q1"), message("q2")]);
    const [lease] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE });
    await rejectsWith(store.enqueue([message("over-1"), message("over-2")]), "queue_full");
    assert.equal(await store.getMessages(["over-1", "over-2"]), []);
    await store.enqueue([message("fits")]);
    await rejectsWith(store.enqueue([message("one-too-many")]), "queue_full");
    await store.ack([lease.leaseId]);
    await store.enqueue([message("after-ack")]);
    const [deadLease] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE });
    await store.nack([deadLease.leaseId], { dead: true, reason: "poison" });
    // dead messages do not count toward depth
    await store.enqueue([message("after-dead")]);
    await rejectsWith(store.enqueue([message("full-again")]), "queue_full");
  });

  it("drop_oldest makes room by removing the oldest queued messages, never leased ones, or refuses the whole batch and removes nothing", { maxDepth: 4, dropOldest: true }, async (store, clock, heard) => {
    const now = clock.now();
    // received_at order differs from insertion order: "oldest" is by received_at, then id.
    await store.enqueue([message("c", { receivedAtMs: now - 300 }), message("a", { receivedAtMs: now - 500 }), message("b", { receivedAtMs: now - 400 })]);
    const [leased] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE });
    assert.is(leased.id, "a");
    await store.enqueue([message("d", { receivedAtMs: now - 200 })]);
    // Full (a leased, b c d queued): two more remove b and c, the oldest queued; a stays leased.
    await store.enqueue([message("e"), message("f")]);
    assert.equal((await store.listMessages({ limit: 10 })).map((v) => v.id).sort(), ["a", "d", "e", "f"]);
    assert.is(await stateOf(store, "a"), "leased");
    // Five would need four queued removed, but only d, e and f are queued: refused, nothing removed.
    await rejectsWith(store.enqueue(["g1", "g2", "g3", "g4", "g5"].map((id) => message(id))), "queue_full");
    assert.equal((await store.listMessages({ limit: 10 })).map((v) => v.id).sort(), ["a", "d", "e", "f"]);
    // The depth counter followed the removals: after an ack frees one place, one fits without removing anything.
    await store.ack([leased.leaseId]);
    await store.enqueue([message("h")]);
    assert.equal((await store.listMessages({ limit: 10 })).map((v) => v.id).sort(), ["d", "e", "f", "h"]);
    await store.enqueue([message("i")]);
    assert.equal((await store.listMessages({ limit: 10 })).map((v) => v.id).sort(), ["e", "f", "h", "i"]);
    // Reported once per committed enqueue that removed messages, with how many.
    assert.equal(heard.dropped, [2, 1]);
  });

  it("drop_oldest refuses a batch naming a stored message as a duplicate, and removes nothing for it", { maxDepth: 2, dropOldest: true }, async (store, clock, heard) => {
    await store.enqueue([message("a", { receivedAtMs: clock.now() - 10 }), message("b")]);
    const refused = await rejectsWith(store.enqueue([message("new"), message("a", { payload: bytes("replacement") })]), "duplicate_id");
    assert.is(refused.itemIndex, 1);
    const [a] = await store.getMessages(["a"], { payload: true });
    assert.equal([...a.payload!], [...bytes("body of a")]);
    assert.equal((await store.listMessages({ limit: 10 })).map((v) => v.id).sort(), ["a", "b"]);
    assert.equal(heard.dropped, []);
  });

  it("drop_oldest may remove a message stored by an earlier batch of the same moment", { maxDepth: 1, dropOldest: true }, async (store, _clock, heard) => {
    const results = await Promise.allSettled([store.enqueue([message("x")]), store.enqueue([message("y")])]);
    assert.equal(results.map((r) => r.status), ["fulfilled", "fulfilled"]);
    assert.equal((await store.listMessages({ limit: 10 })).map((v) => v.id), ["y"]);
    assert.equal(heard.dropped, [1]);
  });

  it("drop_oldest in a shared commit makes room for each batch in turn", { maxDepth: 2, dropOldest: true }, async (store, _clock, heard) => {
    await store.enqueue([message("old-1"), message("old-2")]);
    const results = await Promise.allSettled([
      store.enqueue([message("x-1")]),
      store.enqueue([message("y-1"), message("y-2"), message("y-3")]),
      store.enqueue([message("z-1")]),
    ]);
    assert.equal(results.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
    assert.is(((results[1] as PromiseRejectedResult).reason as StoreError).code, "queue_full");
    assert.equal((await store.listMessages({ limit: 10 })).map((v) => v.id).sort(), ["x-1", "z-1"]);
    assert.is(heard.dropped.reduce((sum, n) => sum + n, 0), 2);
  });

  it("a future next_run_at keeps the message invisible until it is reached", {}, async (store, clock) => {
    await store.enqueue([message("scheduled", { nextRunAtMs: clock.now() + 10 * SECOND })]);
    assert.is((await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: SECOND })).length, 0);
    clock.advance(10 * SECOND);
    assert.equal((await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: SECOND })).map((m) => m.id), ["scheduled"]);
  });

  it("expired lease returns to queued and is redelivered with attempt 2 and a new lease", {}, async (store, clock) => {
    await store.enqueue([message("slow")]);
    const [first] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 30 * SECOND });
    clock.advance(29 * SECOND);
    assert.is((await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: SECOND })).length, 0);
    clock.advance(SECOND);
    assert.is(await stateOf(store, "slow"), "queued");
    const [second] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 30 * SECOND });
    assert.is(second.id, "slow");
    assert.is(second.attempt, 2);
    assert.is.not(second.leaseId, first.leaseId);
    const late = await store.ack([first.leaseId]);
    assert.equal(late, { settled: [], conflicts: [{ leaseId: first.leaseId, reason: "lease_not_found" }] });
    assert.is(await stateOf(store, "slow"), "leased");
  });

  it("ack of an expired lease is a conflict and returns the message to queued", {}, async (store, clock) => {
    await store.enqueue([message("expired")]);
    const [lease] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 5 * SECOND });
    clock.advance(5 * SECOND);
    const outcome = await store.ack([lease.leaseId]);
    assert.equal(outcome, { settled: [], conflicts: [{ leaseId: lease.leaseId, reason: "lease_expired" }] });
    assert.is(await stateOf(store, "expired"), "queued");
  });

  it("a late ack is lease_expired even after a sweep returned the message, until the message is leased again", {}, async (store, clock) => {
    await store.enqueue([message("swept")]);
    const [lease] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 5 * SECOND });
    clock.advance(6 * SECOND);
    // Any reader sweeps run-out leases first (and so would a dequeue on another route).
    assert.is(await stateOf(store, "swept"), "queued");
    assert.equal((await store.queueStats()).byState.leased, 0);
    assert.equal((await store.ack([lease.leaseId])).conflicts, [{ leaseId: lease.leaseId, reason: "lease_expired" }]);
    assert.equal((await store.nack([lease.leaseId], { dead: true })).conflicts, [{ leaseId: lease.leaseId, reason: "lease_expired" }]);
    assert.equal((await store.extend([lease.leaseId], MINUTE)).conflicts, [{ leaseId: lease.leaseId, reason: "lease_expired" }]);
    const [again] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE });
    assert.is(again.id, "swept");
    assert.equal((await store.ack([lease.leaseId])).conflicts, [{ leaseId: lease.leaseId, reason: "lease_not_found" }], "the old lease is gone once another one is issued");
    assert.equal(await store.ack([again.leaseId]), { settled: [again.leaseId], conflicts: [] });
  });

  it("batch ack applies the valid half and reports the rest", {}, async (store) => {
    await store.enqueue([message("m1"), message("m2"), message("untouched")]);
    const leased = await store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: MINUTE });
    const outcome = await store.ack([leased[0].leaseId, "lease_0000000000000000", leased[1].leaseId, leased[0].leaseId]);
    assert.equal(outcome.settled, [leased[0].leaseId, leased[1].leaseId]);
    assert.equal(outcome.conflicts, [{ leaseId: "lease_0000000000000000", reason: "lease_not_found" }]);
    assert.equal(await store.getMessages(["m1", "m2"]), []);
    assert.is(await stateOf(store, "untouched"), "queued");
  });

  it("a repeated ack within two minutes succeeds, ack after nack and nack after ack conflict", {}, async (store, clock) => {
    await store.enqueue([message("acked"), message("nacked")]);
    const [a, n] = await store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: MINUTE });
    await store.ack([a.leaseId]);
    await store.nack([n.leaseId], { dead: true, reason: "bad" });
    clock.advance(119 * SECOND);
    assert.equal(await store.ack([a.leaseId]), { settled: [a.leaseId], conflicts: [], repeated: [a.leaseId] });
    assert.equal(await store.nack([n.leaseId], { dead: true }), { settled: [n.leaseId], conflicts: [], repeated: [n.leaseId] });
    assert.equal((await store.nack([a.leaseId], { delayMs: 0 })).conflicts, [{ leaseId: a.leaseId, reason: "lease_not_found" }]);
    assert.equal((await store.ack([n.leaseId])).conflicts, [{ leaseId: n.leaseId, reason: "lease_not_found" }]);
    // A requeueing nack is not a repeat of a dead-lettering one, nor the reverse: the worker must not
    // hear "done" for a dead-letter that did not happen.
    assert.equal((await store.nack([n.leaseId], { delayMs: 0 })).conflicts, [{ leaseId: n.leaseId, reason: "lease_not_found" }]);
    assert.is(await stateOf(store, "nacked"), "dead");
    await store.enqueue([message("requeued")]);
    const [r] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE });
    await store.nack([r.leaseId], { delayMs: MINUTE });
    assert.equal((await store.nack([r.leaseId], { delayMs: MINUTE })).repeated, [r.leaseId]);
    assert.equal((await store.nack([r.leaseId], { dead: true, reason: "poison" })).conflicts, [{ leaseId: r.leaseId, reason: "lease_not_found" }]);
    assert.is(await stateOf(store, "requeued"), "queued");
    clock.advance(2 * SECOND);
    assert.equal((await store.ack([a.leaseId])).conflicts, [{ leaseId: a.leaseId, reason: "lease_not_found" }]);
  });

  it("nack delay hides the item until it elapses", {}, async (store, clock) => {
    await store.enqueue([message("retry-me")]);
    const [lease] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE });
    assert.equal(await store.nack([lease.leaseId], { delayMs: 10 * SECOND }), { settled: [lease.leaseId], conflicts: [] });
    assert.is(await stateOf(store, "retry-me"), "queued");
    clock.advance(9999);
    assert.is((await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE })).length, 0);
    clock.advance(1);
    const [again] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE });
    assert.is(again.id, "retry-me");
    assert.is(again.attempt, 2);
  });

  it("nack dead moves the message to the DLQ with its reason", {}, async (store) => {
    await store.enqueue([message("a-poison"), message("b-no-reason")]);
    const leased = await store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: MINUTE });
    await store.nack([leased[0].leaseId], { dead: true, reason: "schema mismatch" });
    await store.nack([leased[1].leaseId], { dead: true });
    const dead = await store.listMessages({ state: "dead", limit: 10 });
    const byId = Object.fromEntries(dead.map((v) => [v.id, v]));
    assert.is(byId["a-poison"].deadReason, "schema mismatch");
    assert.is(byId["a-poison"].attempt, 1);
    assert.is(byId["b-no-reason"].deadReason, null);
    assert.is((await store.dequeue({ route: "/orders", batch: 5, leaseTtlMs: MINUTE })).length, 0);
  });

  it("extend keeps the lease past its first ttl, never shortens it, and refuses expired leases", {}, async (store, clock) => {
    await store.enqueue([message("long-job"), message("lost-job")]);
    const [lease, lost] = await store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: 10 * SECOND });
    clock.advance(8 * SECOND);
    assert.equal(await store.extend([lease.leaseId], 30 * SECOND), { settled: [lease.leaseId], conflicts: [] });
    assert.equal(await store.extend([lease.leaseId], SECOND), { settled: [lease.leaseId], conflicts: [] });
    clock.advance(20 * SECOND);
    assert.is((await store.dequeue({ route: "/orders", batch: 5, leaseTtlMs: MINUTE })).map((m) => m.id).includes("long-job"), false);
    const [view] = await store.getMessages(["long-job"]);
    assert.is(view.leaseUntilMs, clock.now() - 28 * SECOND + 38 * SECOND);
    assert.equal((await store.extend([lost.leaseId], MINUTE)).conflicts, [{ leaseId: lost.leaseId, reason: "lease_not_found" }]);
    assert.equal(await store.ack([lease.leaseId]), { settled: [lease.leaseId], conflicts: [] });
  });

  it("a lease used on another route is not found and stays leased", {}, async (store) => {
    await store.enqueue([message("scoped")]);
    const [lease] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE });
    assert.equal(await store.ack([lease.leaseId], { route: "/other" }), { settled: [], conflicts: [{ leaseId: lease.leaseId, reason: "lease_not_found" }] });
    assert.is(await stateOf(store, "scoped"), "leased");
    assert.equal((await store.ack([lease.leaseId], { route: "/orders" })).settled, [lease.leaseId]);
  });

  it("a settled lease repeated through another route is not found there; through its own it is a repeat", {}, async (store) => {
    await store.enqueue([message("acked-here"), message("nacked-here")]);
    const [a, n] = await store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: MINUTE });
    assert.equal((await store.ack([a.leaseId], { route: "/orders" })).settled, [a.leaseId]);
    assert.equal((await store.nack([n.leaseId], { dead: true }, { route: "/orders" })).settled, [n.leaseId]);
    assert.equal(await store.ack([a.leaseId], { route: "/other" }), { settled: [], conflicts: [{ leaseId: a.leaseId, reason: "lease_not_found" }] });
    assert.equal(await store.nack([n.leaseId], { dead: true }, { route: "/other" }), { settled: [], conflicts: [{ leaseId: n.leaseId, reason: "lease_not_found" }] });
    assert.equal(await store.ack([a.leaseId], { route: "/orders" }), { settled: [a.leaseId], conflicts: [], repeated: [a.leaseId] });
    assert.equal(await store.ack([a.leaseId]), { settled: [a.leaseId], conflicts: [], repeated: [a.leaseId] }, "unscoped (push and exec delivery)");
  });

  it("with delivered_retention off ack deletes the message", {}, async (store) => {
    await store.enqueue([message("gone")]);
    const [lease] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE });
    await store.ack([lease.leaseId]);
    assert.equal(await store.getMessages(["gone"]), []);
    assert.is((await store.queueStats()).byState.delivered, 0);
  });

  it("with delivered_retention on ack keeps the message as delivered until it ages out", { deliveredRetentionMs: 60 * MINUTE }, async (store, clock) => {
    await store.enqueue([message("kept"), message("still-queued")]);
    const [lease] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE });
    await store.ack([lease.leaseId]);
    assert.is(await stateOf(store, "kept"), "delivered");
    assert.is((await store.queueStats()).byState.delivered, 1);
    clock.advance(59 * MINUTE);
    assert.is((await store.prune()).delivered, 0);
    clock.advance(2 * MINUTE);
    assert.is((await store.prune()).delivered, 1);
    assert.equal(await store.getMessages(["kept"]), []);
    assert.is(await stateOf(store, "still-queued"), "queued");
  });

  it("requeue resets attempt and resume keeps it", {}, async (store) => {
    await store.enqueue([message("a-dead"), message("b-canceled")]);
    const leased = await store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: MINUTE });
    await store.nack([leased[0].leaseId], { dead: true, reason: "x" });
    await store.nack([leased[1].leaseId], { delayMs: 0 });
    const [again] = await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE });
    assert.is(again.attempt, 2);
    assert.is(await store.changeByIds("cancel", ["b-canceled"]), 1);
    assert.is(await store.changeByIds("requeue", ["a-dead"]), 1);
    assert.is(await store.changeByIds("resume", ["b-canceled"]), 1);
    const views = Object.fromEntries((await store.getMessages(["a-dead", "b-canceled"])).map((v) => [v.id, v]));
    assert.is(views["a-dead"].state, "queued");
    assert.is(views["a-dead"].attempt, 0);
    assert.is(views["a-dead"].deadReason, null);
    assert.is(views["b-canceled"].state, "queued");
    assert.is(views["b-canceled"].attempt, 2);
    const redelivered = await store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: MINUTE });
    assert.equal(Object.fromEntries(redelivered.map((m) => [m.id, m.attempt])), { "a-dead": 1, "b-canceled": 3 });
  });

  it("lifecycle by ids follows the state rules and ignores unknown ids", {}, async (store) => {
    await store.enqueue([message("a-leased"), message("b-dead"), message("c-queued")]);
    const [leased, toKill] = await store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: MINUTE });
    assert.equal([leased.id, toKill.id], ["a-leased", "b-dead"]);
    await store.nack([toKill.leaseId], { dead: true });
    assert.is(await store.changeByIds("cancel", []), 0);
    assert.is(await store.changeByIds("resume", ["a-leased", "b-dead", "c-queued", "nope"]), 0);
    assert.is(await store.changeByIds("requeue", ["a-leased", "c-queued"]), 0);
    assert.is(await store.changeByIds("dlq_requeue", ["a-leased", "c-queued"]), 0);
    assert.is(await store.changeByIds("cancel", ["a-leased", "b-dead", "c-queued", "nope"]), 3);
    assert.equal((await store.ack([leased.leaseId])).conflicts, [{ leaseId: leased.leaseId, reason: "lease_not_found" }]);
    assert.is(await store.changeByIds("dlq_requeue", ["b-dead"]), 0);
    assert.equal((await store.queueStats()).byState, { queued: 0, leased: 0, delivered: 0, dead: 0, canceled: 3 });
  });

  it("DLQ requeue and delete act on dead messages only", {}, async (store) => {
    await store.enqueue([message("dead-a"), message("dead-b"), message("x-alive")]);
    const leased = await store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: MINUTE });
    await store.nack(leased.map((m) => m.leaseId), { dead: true, reason: "r" });
    assert.is(await store.deleteDead(["dead-a", "x-alive", "missing"]), 1);
    assert.is(await store.changeByIds("dlq_requeue", ["dead-b", "x-alive"]), 1);
    assert.equal(await store.getMessages(["dead-a"]), []);
    assert.is(await stateOf(store, "dead-b"), "queued");
    assert.is(await stateOf(store, "x-alive"), "queued");
  });

  it("filter mutations honour route, target, state, before, limit and preview", {}, async (store, clock) => {
    const now = clock.now();
    await store.enqueue([
      message("old-1", { receivedAtMs: now - 3000 }),
      message("old-2", { receivedAtMs: now - 2000 }),
      message("new-1", { receivedAtMs: now - 10 }),
      message("other-target", { target: "https://x.example/", receivedAtMs: now - 5000 }),
      message("other-route", { route: "/other", receivedAtMs: now - 5000 }),
    ]);
    const preview = await store.changeByFilter("cancel", { route: "/orders", target: "pull", beforeMs: now - 1000, limit: 100, previewOnly: true });
    assert.equal(preview, { matched: 2, changed: 0 });
    assert.is((await store.queueStats()).byState.canceled, 0);
    const limited = await store.changeByFilter("cancel", { route: ["/orders"], target: "pull", limit: 1 });
    assert.equal(limited, { matched: 1, changed: 1 });
    assert.is(await stateOf(store, "old-1"), "canceled");
    assert.is(await stateOf(store, "old-2"), "queued");
    await rejectsWith(store.changeByFilter("resume", { state: "queued", limit: 10 }), "invalid_argument");
    const resumed = await store.changeByFilter("resume", { route: "/orders", state: "canceled", limit: 10 });
    assert.equal(resumed, { matched: 1, changed: 1 });
    const all = await store.changeByFilter("cancel", { route: ["/orders", "/other"], limit: 1000 });
    assert.equal(all, { matched: 5, changed: 5 });
    assert.equal(await store.changeByFilter("requeue", { route: "/other", limit: 10 }), { matched: 1, changed: 1 });
    assert.is(await stateOf(store, "other-target"), "canceled");
  });

  it("a filter's limit caps what changes, whatever the filter names (oldest first)", {}, async (store, clock) => {
    const now = clock.now();
    await store.enqueue(Array.from({ length: 6 }, (_, i) => message(`f${i}`, { receivedAtMs: now - 1000 + i })));
    assert.equal(await store.changeByFilter("cancel", { route: "/orders", state: "queued", limit: 1 }), { matched: 1, changed: 1 });
    assert.equal(await store.changeByFilter("cancel", { route: "/orders", limit: 2 }), { matched: 2, changed: 2 });
    assert.equal(await store.changeByFilter("resume", { route: "/orders", limit: 2 }), { matched: 2, changed: 2 });
    const states = await Promise.all(Array.from({ length: 6 }, (_, i) => stateOf(store, `f${i}`)));
    assert.equal(states, ["queued", "queued", "canceled", "queued", "queued", "queued"]);
  });

  it("list messages filters and orders newest first", {}, async (store, clock) => {
    const now = clock.now();
    await store.enqueue([
      message("a", { receivedAtMs: now - 300 }),
      message("b", { receivedAtMs: now - 200 }),
      message("c", { receivedAtMs: now - 200 }),
      message("d", { receivedAtMs: now - 100, target: "https://t.example/" }),
      message("e", { route: "/other", receivedAtMs: now - 50 }),
    ]);
    assert.equal((await store.listMessages({ limit: 10 })).map((v) => v.id), ["e", "d", "c", "b", "a"]);
    assert.equal((await store.listMessages({ route: "/orders", limit: 10 })).map((v) => v.id), ["d", "c", "b", "a"]);
    assert.equal((await store.listMessages({ route: ["/orders", "/other"], target: "pull", limit: 10 })).map((v) => v.id), ["e", "c", "b", "a"]);
    assert.equal((await store.listMessages({ beforeMs: now - 200, limit: 10 })).map((v) => v.id), ["a"]);
    assert.equal((await store.listMessages({ limit: 2 })).map((v) => v.id), ["e", "d"]);
    await store.dequeue({ route: "/other", batch: 1, leaseTtlMs: MINUTE });
    assert.equal((await store.listMessages({ state: "leased", limit: 10 })).map((v) => v.id), ["e"]);
    const [plain] = await store.listMessages({ limit: 1 });
    assert.is(plain.payload, undefined);
    assert.is(plain.headers, undefined);
    await rejectsWith(store.listMessages({ limit: 1001 }), "invalid_argument");
  });

  it("attempts are recorded and listed with filters, newest first", {}, async (store, clock) => {
    await store.recordAttempts([{ messageId: "evt_1", route: "/orders", target: "https://a/", attempt: 1, statusCode: 503, error: "bad gateway", outcome: "retry" }]);
    clock.advance(SECOND);
    const cutoff = clock.now();
    await store.recordAttempts([
      { messageId: "evt_1", route: "/orders", target: "https://a/", attempt: 2, statusCode: 200, outcome: "acked" },
      { messageId: "evt_2", route: "/other", target: "https://b/", attempt: 1, statusCode: 400, outcome: "dead", deadReason: "no_retry" },
    ]);
    const all = await store.listAttempts({ limit: 10 });
    assert.is(all.length, 3);
    assert.is(all[2].attempt, 1);
    assert.is(all[2].error, "bad gateway");
    assert.is(all[2].createdAtMs, cutoff - SECOND);
    assert.equal((await store.listAttempts({ messageId: "evt_1", limit: 10 })).map((a) => a.attempt), [2, 1]);
    assert.equal((await store.listAttempts({ outcome: "dead", limit: 10 })).map((a) => [a.messageId, a.deadReason, a.statusCode]), [["evt_2", "no_retry", 400]]);
    assert.equal((await store.listAttempts({ route: "/orders", target: "https://a/", beforeMs: cutoff, limit: 10 })).map((a) => a.outcome), ["retry"]);
    assert.equal((await store.listAttempts({ route: ["/other"], limit: 10 })).map((a) => a.messageId), ["evt_2"]);
    assert.is((await store.listAttempts({ limit: 1 })).length, 1);
    assert.match(all[0].id, /.+/);
  });

  it("queue stats report counts by state, oldest queued age, ready lag and top buckets", {}, async (store, clock) => {
    const now = clock.now();
    await store.enqueue([
      message("oldest", { receivedAtMs: now - 90 * SECOND, nextRunAtMs: now - 30 * SECOND }),
      message("q2", { receivedAtMs: now - 10 * SECOND }),
      message("t1", { target: "https://t/", receivedAtMs: now - 5 * SECOND }),
      message("to-lease", { route: "/leased", receivedAtMs: now - SECOND }),
      message("to-kill", { route: "/dead", receivedAtMs: now - SECOND }),
    ]);
    await store.dequeue({ route: "/leased", batch: 1, leaseTtlMs: MINUTE });
    const [kill] = await store.dequeue({ route: "/dead", batch: 1, leaseTtlMs: MINUTE });
    await store.nack([kill.leaseId], { dead: true });
    const stats = await store.queueStats();
    assert.equal(stats.byState, { queued: 3, leased: 1, delivered: 0, dead: 1, canceled: 0 });
    assert.is(stats.total, 5);
    assert.is(stats.oldestQueuedReceivedAtMs, now - 90 * SECOND);
    assert.is(stats.oldestQueuedAgeMs, 90 * SECOND);
    assert.is(stats.readyLagMs, 30 * SECOND);
    assert.equal(stats.topQueued.map((b) => [b.route, b.target, b.queued]), [["/orders", "pull", 2], ["/orders", "https://t/", 1]]);
    assert.equal(stats.leasedByRoute, { "/leased": 1 });
  });

  it("leased counts by route follow dequeue, ack, nack and lease expiry", {}, async (store, clock) => {
    await store.enqueue([message("a1"), message("a2"), message("a3"), message("b1", { route: "/billing" }), message("untouched", { route: "/quiet" })]);
    assert.equal((await store.queueStats()).leasedByRoute, {});
    const orders = await store.dequeue({ route: "/orders", batch: 3, leaseTtlMs: MINUTE });
    const [billing] = await store.dequeue({ route: "/billing", batch: 1, leaseTtlMs: 10 * SECOND });
    assert.equal((await store.queueStats()).leasedByRoute, { "/orders": 3, "/billing": 1 });
    await store.ack([orders[0].leaseId]);
    await store.nack([orders[1].leaseId], { delayMs: 0 });
    assert.equal((await store.queueStats()).leasedByRoute, { "/orders": 1, "/billing": 1 });
    clock.advance(11 * SECOND);
    assert.equal((await store.queueStats()).leasedByRoute, { "/orders": 1 }, "the expired /billing lease is no longer counted");
    await store.ack([orders[2].leaseId]);
    assert.equal((await store.queueStats()).leasedByRoute, {});
    assert.is(billing.route, "/billing");
  });

  it("backlog top_queued and oldest_queued report buckets and oldest items", {}, async (store, clock) => {
    const now = clock.now();
    await store.enqueue([
      message("o1", { receivedAtMs: now - 50 * SECOND }),
      message("o2", { receivedAtMs: now - 40 * SECOND }),
      message("o3", { receivedAtMs: now - 30 * SECOND, nextRunAtMs: now - 45 * SECOND }),
      message("x1", { route: "/other", receivedAtMs: now - 60 * SECOND, nextRunAtMs: now - 90 * SECOND }),
    ]);
    const top = await store.topQueued({}, 1);
    assert.is(top.queuedTotal, 4);
    assert.is(top.truncated, true);
    assert.equal(top.items.map((b) => [b.route, b.queued, b.oldestQueuedReceivedAtMs]), [["/orders", 3, now - 50 * SECOND]]);
    assert.is(top.oldestQueuedReceivedAtMs, now - 60 * SECOND);
    const oldest = await store.oldestQueued({ route: "/orders" }, 2);
    assert.equal(oldest.items.map((i) => i.id), ["o1", "o2"]);
    assert.is(oldest.queuedTotal, 3);
    assert.is(oldest.truncated, true);
    assert.is(oldest.returned, 2);
    assert.is(oldest.earliestQueuedNextRunAtMs, now - 45 * SECOND, "the selector's earliest, though o3 is past the page");
  });

  it("aging summary computes age windows and p50/p90/p99 per bucket", {}, async (store, clock) => {
    const now = clock.now();
    const items = Array.from({ length: 10 }, (_, i) => message(`age-${i}`, { receivedAtMs: now - (i + 1) * MINUTE }));
    await store.enqueue([...items, message("dead-old", { route: "/dlq", receivedAtMs: now - 2 * 60 * MINUTE })]);
    const [lease] = await store.dequeue({ route: "/dlq", batch: 1, leaseTtlMs: MINUTE });
    await store.nack([lease.leaseId], { dead: true });
    const summary = await store.agingSummary({}, ["queued", "leased", "dead"], 100);
    assert.is(summary.scanned, 11);
    assert.is(summary.bucketCount, 2);
    const orders = summary.items.find((b) => b.route === "/orders")!;
    assert.equal(orders.stateCounts, { queued: 10, leased: 0, dead: 0 });
    assert.equal(orders.agePercentilesSeconds, { p50: 300, p90: 540, p99: 600 });
    assert.equal(orders.ageWindows, { le_5m: 5, gt_5m_le_15m: 5, gt_15m_le_1h: 0, gt_1h_le_6h: 0, gt_6h: 0 });
    assert.is(orders.oldestQueuedReceivedAtMs, now - 10 * MINUTE);
    assert.is(orders.readyOverdueCount, 10);
    const deadOnly = await store.agingSummary({ route: "/dlq" }, ["dead"], 100);
    assert.equal(deadOnly.ageWindows.gt_1h_le_6h, 1);
    assert.equal(deadOnly.items[0].stateCounts, { queued: 0, leased: 0, dead: 1 });
  });

  it("trend samples roll up by window and step", {}, async (store, clock) => {
    const start = clock.now();
    await store.captureTrendSample();
    await store.enqueue([message("t1"), message("t2"), message("t3", { route: "/other" })]);
    clock.advance(MINUTE);
    await store.captureTrendSample();
    await store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: 60 * MINUTE });
    clock.advance(MINUTE);
    await store.captureTrendSample();
    clock.advance(MINUTE);
    const report = await store.trends({ windowMs: 10 * MINUTE, stepMs: 2 * MINUTE, untilMs: clock.now() });
    assert.is(report.pointCount, 5);
    assert.is(report.sampleCount, 3);
    assert.is(report.latestCapturedAtMs, start + 2 * MINUTE);
    assert.is(report.latestTotal, 3);
    assert.is(report.maxTotal, 3);
    const nonEmpty = report.items.filter((p) => p.sampleCount > 0);
    assert.is(report.nonEmptyPointCount, nonEmpty.length);
    const last = report.items[report.items.length - 1];
    assert.is(last.queuedLast + last.leasedLast, 3);
    const scoped = await store.trends({ route: "/orders", windowMs: 10 * MINUTE, stepMs: MINUTE, untilMs: clock.now() });
    assert.is(scoped.sampleCount, 3);
    assert.equal(scoped.items.filter((p) => p.sampleCount > 0).map((p) => [p.queuedLast, p.leasedLast]), [[0, 0], [2, 0], [1, 1]]);
  });

  it("retention prunes old queued, dead beyond age and depth, and attempts by age and rows", {
    queueRetentionMs: 60 * MINUTE, dlqRetentionMs: 30 * MINUTE, dlqMaxDepth: 2, attemptsRetentionMs: 30 * MINUTE, attemptsMaxRows: 2,
  }, async (store, clock) => {
    const now = clock.now();
    await store.enqueue([message("stale", { receivedAtMs: now - 61 * MINUTE }), message("fresh", { receivedAtMs: now - 50 * MINUTE })]);
    await store.enqueue(["d1", "d2", "d3", "d4"].map((id) => message(id, { route: "/dlq" })));
    for (let i = 0; i < 4; i++) {
      const [lease] = await store.dequeue({ route: "/dlq", batch: 1, leaseTtlMs: MINUTE });
      await store.nack([lease.leaseId], { dead: true });
      await store.recordAttempts([{ messageId: lease.id, route: "/dlq", target: "pull", attempt: 1, outcome: "dead" }]);
      clock.advance(MINUTE);
    }
    const report = await store.prune();
    assert.is(report.queued, 1);
    assert.is(report.dead, 2);
    assert.is(report.attempts, 2);
    assert.equal((await store.getMessages(["stale", "fresh"])).map((v) => v.id), ["fresh"]);
    assert.equal((await store.listMessages({ state: "dead", limit: 10 })).map((v) => v.id).sort(), ["d3", "d4"]);
    clock.advance(30 * MINUTE);
    const later = await store.prune();
    assert.is(later.dead, 2);
    assert.is(later.attempts, 2);
    assert.equal(await store.listAttempts({ limit: 10 }), []);
  });

  it("a long-poll dequeue wakes on enqueue", {}, async (store) => {
    const polling = store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE, maxWaitMs: 30 * SECOND });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await store.enqueue([message("wake-up")]);
    assert.equal((await polling).map((m) => m.id), ["wake-up"]);
  });

  it("a long-poll dequeue wakes on requeue and when a nack delay elapses", {}, async (store, clock) => {
    await store.enqueue([message("a-dlq-item"), message("b-delayed")]);
    const leased = await store.dequeue({ route: "/orders", batch: 2, leaseTtlMs: MINUTE });
    await store.nack([leased[0].leaseId], { dead: true });
    await store.nack([leased[1].leaseId], { delayMs: 5 * SECOND });
    const onRequeue = store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE, maxWaitMs: 60 * SECOND });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await store.changeByIds("dlq_requeue", [leased[0].id]);
    assert.equal((await onRequeue).map((m) => m.id), [leased[0].id]);
    let signalled = 0;
    const unsubscribe = store.onReady(() => signalled++);
    const onDelay = store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE, maxWaitMs: 60 * SECOND });
    await new Promise((resolve) => setTimeout(resolve, 20));
    clock.advance(5 * SECOND);
    assert.equal((await onDelay).map((m) => m.id), ["b-delayed"]);
    assert.ok(signalled >= 1);
    unsubscribe();
  });

  it("an aborted long poll returns nothing and leases nothing", {}, async (store, clock) => {
    const controller = new AbortController();
    const polling = store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE, maxWaitMs: 60 * SECOND }, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    assert.equal(await polling, []);
    const timed = store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE, maxWaitMs: 2 * SECOND });
    await new Promise((resolve) => setTimeout(resolve, 20));
    clock.advance(2 * SECOND);
    assert.equal(await timed, []);
    await store.enqueue([message("later")]);
    assert.is(await stateOf(store, "later"), "queued");
  });

  it("onReady listeners hear enqueues for their route", {}, async (store) => {
    const heard: (string | undefined)[] = [];
    const unsubscribe = store.onReady((route) => heard.push(route));
    await store.enqueue([message("n1"), message("n2", { route: "/other" })]);
    unsubscribe();
    await store.enqueue([message("n3")]);
    assert.ok(heard.includes("/orders"));
    assert.ok(heard.includes("/other"));
    const count = heard.length;
    await store.enqueue([message("n4")]);
    assert.is(heard.length, count);
  });

  it("runtime secrets: add, list by pool in creation order, delete, duplicate ids refused", {}, async (store, clock) => {
    const now = clock.now();
    const row = (pool: string, id: string, notAfterMs: number | null = null) => ({ pool, id, sealed: bytes(`sealed ${id}`), notBeforeMs: now, notAfterMs, createdAtMs: clock.now() });
    await store.addRuntimeSecret(row("a", "sec_1"));
    clock.advance(10);
    await store.addRuntimeSecret(row("a", "sec_2", now + MINUTE));
    await store.addRuntimeSecret(row("b", "sec_1"));
    await rejectsWith(store.addRuntimeSecret(row("a", "sec_1")), "duplicate_id");
    const listed = await store.listRuntimeSecrets("a");
    assert.equal(listed.map((r) => [r.pool, r.id, r.notAfterMs]), [["a", "sec_1", null], ["a", "sec_2", now + MINUTE]]);
    assert.equal(Buffer.from(listed[0].sealed).toString(), "sealed sec_1");
    assert.is(listed[1].createdAtMs, now + 10);
    assert.is((await store.listRuntimeSecrets()).length, 3);
    assert.is(await store.deleteRuntimeSecret("a", "sec_1"), true);
    assert.is(await store.deleteRuntimeSecret("a", "sec_1"), false);
    assert.is(await store.deleteRuntimeSecret("c", "sec_2"), false);
    assert.equal((await store.listRuntimeSecrets()).map((r) => `${r.pool}/${r.id}`), ["a/sec_2", "b/sec_1"]);
  });

  it("runtime secrets: prune deletes versions whose not_after has come, of one pool or all", {}, async (store, clock) => {
    const now = clock.now();
    const row = (pool: string, id: string, notAfterMs: number | null) => ({ pool, id, sealed: bytes(id), notBeforeMs: now - MINUTE, notAfterMs, createdAtMs: now });
    await store.addRuntimeSecret(row("a", "sec_expires", now + SECOND));
    await store.addRuntimeSecret(row("a", "sec_forever", null));
    await store.addRuntimeSecret(row("b", "sec_expires", now + SECOND));
    await store.addRuntimeSecret(row("b", "sec_later", now + MINUTE));
    assert.equal(await store.pruneRuntimeSecrets(), []);
    clock.advance(SECOND);
    assert.equal(await store.pruneRuntimeSecrets("a"), [{ pool: "a", id: "sec_expires" }]);
    assert.equal(await store.pruneRuntimeSecrets(), [{ pool: "b", id: "sec_expires" }]);
    assert.equal((await store.listRuntimeSecrets()).map((r) => `${r.pool}/${r.id}`), ["a/sec_forever", "b/sec_later"]);
  });

  return contract;
}
