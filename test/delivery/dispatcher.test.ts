import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServerResponse } from "node:http";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createDispatcher, deliveryWorstCaseMs, leaseTtlFor, shareConcurrency, type AttemptEvent, type DeliveryDispatcher, type DispatcherConfig, type HttpTargetSettings } from "../../runtime/delivery/dispatcher.js";
import { DEFAULTS } from "../../compiler/defaults.js";
import type { DequeueRequest, Leased } from "../../runtime/delivery/queue.js";

const defaultEgressPolicy = DEFAULTS.egress;
/** The lease policy the compiler resolves (compiler/defaults.ts). */
const lease = DEFAULTS.deliver;
import { FakeQueue, localEgress, startReceiver, systemClock, waitFor, WEBHOOKS_SIGNING, type Receiver } from "./helpers.js";

const fastRetry = { maxRetries: 8, baseMs: 20, capMs: 200, jitter: 0 };

function httpTarget(receiver: Receiver, overrides: Partial<HttpTargetSettings> = {}): HttpTargetSettings {
  return { kind: "http", target: `${receiver.url}/hook`, url: `${receiver.url}/hook`, timeoutMs: 5_000, retry: fastRetry, ...overrides };
}

function start(queue: FakeQueue, config: DispatcherConfig, events: AttemptEvent[] = []): DeliveryDispatcher {
  const dispatcher = createDispatcher(config, { queue, clock: systemClock, random: () => 0.5, observer: { onAttempt: (e) => events.push(e) } });
  dispatcher.start();
  return dispatcher;
}

const plan = suite("dispatcher plan");

plan("lease TTL is max(30s, one delivery's worst case + slack): the batch's deliveries run side by side", () => {
  assert.is(leaseTtlFor(10_000, lease), 30_000);
  assert.is(leaseTtlFor(60_000, lease), 65_000);
  const exec = { kind: "exec" as const, target: "exec:/bin/true", program: "/bin/true", timeoutMs: 60_000, retry: { maxRetries: 0, baseMs: 1, capMs: 1, jitter: 0 } };
  assert.is(deliveryWorstCaseMs(exec), 62_000, "a program's output may take 2 s to close after it exits");
  assert.is(deliveryWorstCaseMs({ ...exec, killGraceMs: 5_000 }), 67_000, "and a timed-out program gets its kill grace");
});

plan("a route's budget is shared equally, every target keeps at least one slot", () => {
  assert.equal(shareConcurrency(20, 1), [20]);
  assert.equal(shareConcurrency(20, 2), [10, 10]);
  assert.equal(shareConcurrency(20, 3), [7, 7, 6]);
  assert.equal(shareConcurrency(2, 3), [1, 1, 1]);
});

plan.run();

const loop = suite("dispatcher delivery loop");

loop("500 then 200 is delivered on attempt 2 with both attempts recorded", async () => {
  const receiver = await startReceiver((_req, res, index) => res.writeHead(index === 0 ? 500 : 200).end());
  const queue = new FakeQueue();
  const target = httpTarget(receiver);
  queue.enqueue("/orders", target.target, "evt_1", '{"n":1}', { "Content-Type": "application/json" });
  const untouched = queue.enqueue("/other", target.target, "evt_other", "{}");
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 20, targets: [target] }], egress: localEgress, lease });
  try {
    await waitFor(() => queue.get("evt_1").state === "delivered", "delivery");
    assert.equal(receiver.requests.map((r) => r.headers["x-spool-attempt"]), ["1", "2"]);
    assert.equal(queue.attempts, [
      { eventId: "evt_1", route: "/orders", target: target.target, attempt: 1, statusCode: 500, error: "status 500", outcome: "retry" },
      { eventId: "evt_1", route: "/orders", target: target.target, attempt: 2, statusCode: 200, outcome: "acked" },
    ]);
    assert.equal(queue.get("evt_1").nacks, [{ delayMs: 20 }]);
    assert.is(untouched.state, "queued");
    assert.is(untouched.attempt, 0);
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

loop("400 is dead at once with no_retry", async () => {
  const receiver = await startReceiver((_req, res) => res.writeHead(400).end());
  const queue = new FakeQueue();
  const target = httpTarget(receiver);
  queue.enqueue("/orders", target.target, "evt_bad", "{}");
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 20, targets: [target] }], egress: localEgress, lease });
  try {
    await waitFor(() => queue.get("evt_bad").state === "dead", "dead");
    assert.is(receiver.requests.length, 1);
    assert.is(queue.get("evt_bad").deadReason, "no_retry");
    assert.equal(queue.attempts.map((a) => [a.outcome, a.deadReason, a.statusCode]), [["dead", "no_retry", 400]]);
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

loop("max 2 retries means three deliveries, then dead with max_retries", async () => {
  const receiver = await startReceiver((_req, res) => res.writeHead(503).end());
  const queue = new FakeQueue();
  const target = httpTarget(receiver, { retry: { ...fastRetry, maxRetries: 2 } });
  queue.enqueue("/orders", target.target, "evt_down", "{}");
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 20, targets: [target] }], egress: localEgress, lease });
  try {
    await waitFor(() => queue.get("evt_down").state === "dead", "dead");
    assert.is(receiver.requests.length, 3);
    assert.is(queue.get("evt_down").deadReason, "max_retries");
    assert.equal(queue.attempts.map((a) => `${a.attempt}:${a.outcome}${a.deadReason ? `:${a.deadReason}` : ""}`), ["1:retry", "2:retry", "3:dead:max_retries"]);
    assert.equal(queue.get("evt_down").nacks, [{ delayMs: 20 }, { delayMs: 40 }, { dead: true, reason: "max_retries" }]);
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

loop("a hanging receiver is retried after the timeout", async () => {
  const receiver = await startReceiver((_req, res, index) => {
    if (index > 0) res.end("ok");
  });
  const queue = new FakeQueue();
  const target = httpTarget(receiver, { timeoutMs: 200 });
  queue.enqueue("/orders", target.target, "evt_slow", "{}");
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 20, targets: [target] }], egress: localEgress, lease });
  try {
    await waitFor(() => queue.get("evt_slow").state === "delivered", "delivery after timeout");
    assert.equal(queue.attempts.map((a) => [a.attempt, a.outcome, a.error]), [
      [1, "retry", "timeout after 200 ms"],
      [2, "acked", undefined],
    ]);
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

loop("Retry-After lengthens the nack delay", async () => {
  const receiver = await startReceiver((_req, res, index) => (index === 0 ? res.writeHead(503, { "retry-after": "1" }).end() : res.end()));
  const queue = new FakeQueue();
  const target = httpTarget(receiver);
  queue.enqueue("/orders", target.target, "evt_ra", "{}");
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 20, targets: [target] }], egress: localEgress, lease });
  try {
    await waitFor(() => queue.get("evt_ra").state === "delivered", "delivery after Retry-After");
    assert.equal(queue.get("evt_ra").nacks, [{ delayMs: 1_000 }]);
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

loop("fan-out: each of two targets gets the message exactly once", async () => {
  const first = await startReceiver();
  const second = await startReceiver();
  const queue = new FakeQueue();
  const a = httpTarget(first);
  const b = httpTarget(second);
  for (let i = 0; i < 10; i++) {
    queue.enqueue("/fan", a.target, `evt_${i}`, `{"i":${i}}`);
    queue.enqueue("/fan", b.target, `evt_${i}`, `{"i":${i}}`);
  }
  const dispatcher = start(queue, { routes: [{ route: "/fan", concurrency: 20, targets: [a, b] }], egress: localEgress, lease });
  try {
    await waitFor(() => queue.messages.every((m) => m.state === "delivered"), "all delivered");
    for (const receiver of [first, second]) {
      const ids = receiver.requests.map((r) => r.headers["x-spool-message-id"]).sort();
      assert.equal(ids, Array.from({ length: 10 }, (_, i) => `evt_${i}`).sort());
    }
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await first.close();
    await second.close();
  }
});

loop("a slow target does not starve a fast one on the same route", async () => {
  const held: ServerResponse[] = [];
  let releaseAll = false;
  const slow = await startReceiver((_req, res) => (releaseAll ? res.end() : held.push(res)));
  const fast = await startReceiver();
  const queue = new FakeQueue();
  const slowTarget = httpTarget(slow, { timeoutMs: 30_000 });
  const fastTarget = httpTarget(fast);
  for (let i = 0; i < 30; i++) {
    queue.enqueue("/fan", slowTarget.target, `evt_${i}`, "{}");
    queue.enqueue("/fan", fastTarget.target, `evt_${i}`, "{}");
  }
  const dispatcher = start(queue, { routes: [{ route: "/fan", concurrency: 4, targets: [slowTarget, fastTarget] }], egress: localEgress, lease });
  try {
    await waitFor(() => queue.messages.filter((m) => m.target === fastTarget.target).every((m) => m.state === "delivered"), "fast target drained");
    // The slow target is stuck on its share: 2 of the 4 slots, never more.
    await waitFor(() => held.length === 2, "slow target holding its share");
    assert.is(dispatcher.inFlight().byTarget[`/fan ${slowTarget.target}`], 2);
    assert.is(held.length, 2);
    assert.is(queue.messages.filter((m) => m.target === slowTarget.target && m.state === "delivered").length, 0);
    releaseAll = true;
    for (const res of held.splice(0)) res.end();
    await waitFor(() => queue.messages.every((m) => m.state === "delivered"), "slow target drained after release");
  } finally {
    for (const res of held) res.end();
    await dispatcher.stop({ drainMs: 1_000 });
    await slow.close();
    await fast.close();
  }
});

loop("a policy refusal is dead with policy_denied and never reaches the receiver", async () => {
  const receiver = await startReceiver();
  const queue = new FakeQueue();
  const target = httpTarget(receiver);
  queue.enqueue("/orders", target.target, "evt_denied", "{}");
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 20, targets: [target] }], egress: { ...defaultEgressPolicy, httpsOnly: false }, lease });
  try {
    await waitFor(() => queue.get("evt_denied").state === "dead", "dead");
    assert.is(queue.get("evt_denied").deadReason, "policy_denied");
    assert.is(receiver.requests.length, 0);
    assert.is(queue.attempts.length, 1);
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

loop("a retry's event says when the message is due again: the clock's now at settlement plus the delay it was nacked with", async () => {
  const receiver = await startReceiver((_req, res) => res.writeHead(503).end());
  const queue = new FakeQueue();
  const target = httpTarget(receiver, { retry: { ...fastRetry, maxRetries: 1 } });
  queue.enqueue("/orders", target.target, "evt_due", "x");
  const events: AttemptEvent[] = [];
  const frozenNow = 1_700_000_000_000;
  const dispatcher = createDispatcher(
    { routes: [{ route: "/orders", concurrency: 1, targets: [target] }], egress: localEgress, lease },
    { queue, clock: { now: () => frozenNow, sleep: systemClock.sleep }, random: () => 0.5, observer: { onAttempt: (e) => events.push(e) } },
  );
  dispatcher.start();
  try {
    await waitFor(() => events.length === 2, "two attempts");
    const [retry, dead] = events;
    const [nack] = queue.get("evt_due").nacks;
    assert.ok(nack && "delayMs" in nack);
    assert.equal([retry.outcome, retry.nextAttemptAtMs], ["retry", frozenNow + nack.delayMs]);
    assert.equal([dead.outcome, dead.nextAttemptAtMs], ["dead", undefined]);
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

loop("the observer sees every attempt with its outcome and dead reason", async () => {
  const receiver = await startReceiver((req, res) => res.writeHead(req.body.toString() === "ok" ? 200 : req.body.toString() === "bad" ? 404 : 500).end());
  const queue = new FakeQueue();
  const target = httpTarget(receiver, { retry: { ...fastRetry, maxRetries: 1 } });
  queue.enqueue("/orders", target.target, "evt_ok", "ok");
  queue.enqueue("/orders", target.target, "evt_bad", "bad");
  queue.enqueue("/orders", target.target, "evt_flaky", "flaky");
  const events: AttemptEvent[] = [];
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 20, targets: [target] }], egress: localEgress, lease }, events);
  try {
    await waitFor(() => events.length === 4, "four attempts");
    const summary = events.map((e) => `${e.eventId}:${e.outcome}${e.deadReason ? `:${e.deadReason}` : ""}`).sort();
    assert.equal(summary, ["evt_bad:dead:no_retry", "evt_flaky:dead:max_retries", "evt_flaky:retry", "evt_ok:acked"]);
    assert.ok(events.every((e) => e.kind === "http" && e.durationMs >= 0));
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

loop("an attempt that cannot be recorded leaves its lease unsettled: the message comes back rather than being delivered without a record", async () => {
  const receiver = await startReceiver();
  class NoRecords extends FakeQueue {
    override async recordAttempt(): Promise<void> {
      throw new Error("the store lost its connection");
    }
  }
  const queue = new NoRecords();
  const errors: string[] = [];
  const target = httpTarget(receiver);
  queue.enqueue("/orders", target.target, "evt_unrecorded", "{}");
  const dispatcher = createDispatcher(
    { routes: [{ route: "/orders", concurrency: 20, targets: [target] }], egress: localEgress, lease },
    { queue, clock: systemClock, random: () => 0.5, observer: { onError: (_error, where) => errors.push(where.operation) } },
  );
  dispatcher.start();
  try {
    await waitFor(() => errors.includes("record_attempt"), "the failed record");
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.is(receiver.requests.length, 1, "the target got it");
    assert.equal([queue.get("evt_unrecorded").state, queue.attempts.length], ["leased", 0], "neither acked nor recorded: it is delivered again once the lease runs out");
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

loop("dequeue asks for free slots with the route's lease TTL, whatever the batch", async () => {
  const receiver = await startReceiver();
  const queue = new FakeQueue();
  const target = httpTarget(receiver, { timeoutMs: 40_000 });
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 20, targets: [target] }], egress: localEgress, lease });
  try {
    await waitFor(() => queue.dequeues.length > 0, "a dequeue");
    assert.equal(queue.dequeues[0], { route: "/orders", target: target.target, batch: 20, leaseTtlMs: 45_000 });
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

loop.run();

const lifecycle = suite("dispatcher reload and shutdown");

lifecycle("reconfigure applies new headers to new deliveries; the running one finishes on the old settings", async () => {
  const held: ServerResponse[] = [];
  const receiver = await startReceiver((_req, res, index) => (index === 0 ? held.push(res) : res.end()));
  const queue = new FakeQueue();
  const before = httpTarget(receiver, { headers: { "X-Version": "old" } });
  queue.enqueue("/orders", before.target, "evt_inflight", "{}");
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 20, targets: [before] }], egress: localEgress, lease });
  try {
    await waitFor(() => held.length === 1, "first delivery running");
    dispatcher.reconfigure({ routes: [{ route: "/orders", concurrency: 20, targets: [{ ...before, headers: { "X-Version": "new" } }] }], egress: localEgress, lease });
    queue.enqueue("/orders", before.target, "evt_after", "{}");
    await waitFor(() => queue.get("evt_after").state === "delivered", "delivery after reload");
    held[0].end();
    await waitFor(() => queue.get("evt_inflight").state === "delivered", "in-flight delivery settled");
    assert.equal(receiver.requests.map((r) => [r.headers["x-spool-message-id"], r.headers["x-version"]]), [["evt_inflight", "old"], ["evt_after", "new"]]);
    assert.is(queue.attempts.length, 2);
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

lifecycle("messages leased while a reload lands are delivered with the settings their lease was sized for", async () => {
  const receiver = await startReceiver();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  // The first dequeue is held until the reload has happened, as a slow store would hold it.
  class HeldQueue extends FakeQueue {
    override async dequeue(request: DequeueRequest, signal: AbortSignal): Promise<Leased[]> {
      if (this.dequeues.length === 0) {
        this.dequeues.push(request);
        await gate;
        this.dequeues.pop();
      }
      return super.dequeue(request, signal);
    }
  }
  const queue = new HeldQueue();
  const before = httpTarget(receiver, { timeoutMs: 1_000, headers: { "X-Version": "old" } });
  queue.enqueue("/orders", before.target, "evt_raced", "{}");
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 20, targets: [before] }], egress: localEgress, lease });
  try {
    await waitFor(() => queue.dequeues.length === 1, "the held dequeue");
    dispatcher.reconfigure({ routes: [{ route: "/orders", concurrency: 20, targets: [{ ...before, timeoutMs: 60_000, headers: { "X-Version": "new" } }] }], egress: localEgress, lease });
    release();
    await waitFor(() => queue.get("evt_raced").state === "delivered", "the raced delivery");
    assert.is(queue.dequeues[0].leaseTtlMs, 30_000, "the lease was sized for the 1 s timeout");
    assert.equal(receiver.requests.map((r) => r.headers["x-version"]), ["old"]);
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

lifecycle("a target removed by a reload stops leasing but settles what it was delivering", async () => {
  const held: ServerResponse[] = [];
  const receiver = await startReceiver((_req, res) => held.push(res));
  const queue = new FakeQueue();
  const target = httpTarget(receiver);
  queue.enqueue("/orders", target.target, "evt_running", "{}");
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 1, targets: [target] }], egress: localEgress, lease });
  try {
    await waitFor(() => held.length === 1, "delivery running");
    dispatcher.reconfigure({ routes: [], egress: localEgress, lease });
    queue.enqueue("/orders", target.target, "evt_later", "{}");
    held[0].end();
    await waitFor(() => queue.get("evt_running").state === "delivered", "running delivery settled");
    assert.is(dispatcher.inFlight().total, 0);
    assert.is(queue.get("evt_later").state, "queued");
    assert.is(receiver.requests.length, 1);
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

lifecycle("stop() lets running deliveries finish within the drain budget", async () => {
  const held: ServerResponse[] = [];
  const receiver = await startReceiver((_req, res) => held.push(res));
  const queue = new FakeQueue();
  const target = httpTarget(receiver);
  queue.enqueue("/orders", target.target, "evt_draining", "{}");
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 20, targets: [target] }], egress: localEgress, lease });
  await waitFor(() => held.length === 1, "delivery running");
  const stopping = dispatcher.stop({ drainMs: 10_000 });
  queue.enqueue("/orders", target.target, "evt_not_started", "{}");
  setTimeout(() => held[0].end(), 100);
  const report = await stopping;
  assert.equal(report, { abandoned: 0 });
  assert.is(queue.get("evt_draining").state, "delivered");
  assert.is(queue.get("evt_not_started").state, "queued");
  assert.is(receiver.requests.length, 1);
  await receiver.close();
});

lifecycle("stop() past the budget abandons the delivery: the lease stays, nothing is recorded", async () => {
  const receiver = await startReceiver(() => {});
  const queue = new FakeQueue();
  const target = httpTarget(receiver, { timeoutMs: 30_000 });
  const stuck = queue.enqueue("/orders", target.target, "evt_stuck", "{}");
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 20, targets: [target] }], egress: localEgress, lease });
  await waitFor(() => receiver.requests.length === 1, "delivery running");
  const report = await dispatcher.stop({ drainMs: 100 });
  assert.equal(report, { abandoned: 1 });
  assert.is(stuck.state, "leased");
  assert.ok(stuck.leaseId);
  assert.equal(stuck.nacks, []);
  assert.is(queue.attempts.length, 0);
  await receiver.close();
});

lifecycle("a reload to a stricter egress policy refuses deliveries that start after it", async () => {
  const receiver = await startReceiver();
  const queue = new FakeQueue();
  const target = httpTarget(receiver);
  queue.enqueue("/orders", target.target, "evt_before", "{}");
  const routes = [{ route: "/orders", concurrency: 20, targets: [target] }];
  const dispatcher = start(queue, { routes, egress: localEgress, lease });
  try {
    await waitFor(() => queue.get("evt_before").state === "delivered", "delivery before reload");
    dispatcher.reconfigure({ routes, egress: { ...localEgress, dnsRebindProtection: true }, lease });
    queue.enqueue("/orders", target.target, "evt_after", "{}");
    await waitFor(() => queue.get("evt_after").state === "dead", "refusal after reload");
    assert.is(queue.get("evt_after").deadReason, "policy_denied");
    assert.is(receiver.requests.length, 1);
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

lifecycle("a reload with an unusable signing secret is refused and changes nothing", async () => {
  const receiver = await startReceiver();
  const queue = new FakeQueue();
  const target = httpTarget(receiver, { headers: { "X-Version": "old" } });
  const dispatcher = start(queue, { routes: [{ route: "/orders", concurrency: 20, targets: [target] }], egress: localEgress, lease });
  try {
    const broken = { ...target, headers: { "X-Version": "new" }, signing: { ...WEBHOOKS_SIGNING, mode: "standard_webhooks" as const, secrets: [{ value: "whsec_!!!" }] } };
    assert.throws(() => dispatcher.reconfigure({ routes: [{ route: "/orders", concurrency: 20, targets: [broken] }], egress: localEgress, lease }));
    queue.enqueue("/orders", target.target, "evt_1", "{}");
    await waitFor(() => queue.get("evt_1").state === "delivered", "delivery on the old settings");
    assert.is(receiver.requests[0].headers["x-version"], "old");
  } finally {
    await dispatcher.stop({ drainMs: 1_000 });
    await receiver.close();
  }
});

lifecycle.run();

const execRoute = suite("dispatcher exec targets");

execRoute("an exec route runs the program per message and settles by exit code", async () => {
  const dir = mkdtempSync(join(tmpdir(), "spool-dispatch-exec-"));
  try {
    const log = join(dir, "log.txt");
    const program = join(dir, "consume.sh");
    writeFileSync(program, `#!/bin/sh\nbody=$(cat)\necho "$SPOOL_MESSAGE_ID $SPOOL_ATTEMPT $body" >> "${log}"\n[ "$body" = fail ] && [ "$SPOOL_ATTEMPT" = 1 ] && exit 1\nexit 0\n`);
    chmodSync(program, 0o755);
    const queue = new FakeQueue();
    queue.enqueue("/jobs", program, "evt_a", "ok");
    queue.enqueue("/jobs", program, "evt_b", "fail");
    const events: AttemptEvent[] = [];
    const dispatcher = start(queue, { routes: [{ route: "/jobs", concurrency: 1, targets: [{ kind: "exec", target: program, program, timeoutMs: 5_000, retry: fastRetry }] }], egress: localEgress, lease }, events);
    try {
      await waitFor(() => queue.messages.every((m) => m.state === "delivered"), "both delivered");
      assert.equal(readFileSync(log, "utf8").trim().split("\n").sort(), ["evt_a 1 ok", "evt_b 1 fail", "evt_b 2 fail"]);
      assert.equal(queue.attempts.map((a) => `${a.eventId}:${a.attempt}:${a.outcome}`).sort(), ["evt_a:1:acked", "evt_b:1:retry", "evt_b:2:acked"]);
      assert.ok(events.every((e) => e.kind === "exec" && e.output !== undefined));
    } finally {
      await dispatcher.stop({ drainMs: 1_000 });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

execRoute.run();
