import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildConfig, pullRoute } from "./ir-builder.js";
import { message, startHarness, type Harness } from "./harness.js";

const MINUTE = 60_000;

const backlog = suite<{ h: Harness }>("admin backlog analytics");

backlog.before.each(async (context) => {
  const h = (context.h = await startHarness({ config: buildConfig([pullRoute("/orders"), pullRoute("/billing")]) }));
  const now = h.clock.now();
  await h.seed([
    message("o1", "/orders", { receivedAtMs: now - 30 * MINUTE }),
    message("o2", "/orders", { receivedAtMs: now - 20 * MINUTE }),
    message("o3", "/orders", { receivedAtMs: now - 2 * MINUTE }),
    message("b1", "/billing", { receivedAtMs: now - 10 * MINUTE }),
    message("b2", "/billing", { receivedAtMs: now - 1 * MINUTE }),
  ]);
  const [lease] = await h.store.dequeue({ route: "/billing", batch: 1, leaseTtlMs: 10 * MINUTE });
  await h.store.nack([lease.leaseId], { dead: true, reason: "no_retry" });
});
backlog.after.each(async ({ h }) => h.close());

backlog("top_queued lists route/target buckets, most queued first, with ages", async ({ h }) => {
  const reply = await h.request("GET", "/backlog/top_queued");
  assert.is(reply.status, 200);
  assert.equal([reply.body.queue_total, reply.body.queued_total, reply.body.limit, reply.body.truncated], [5, 4, 100, false]);
  assert.equal(reply.body.items.map((i: any) => [i.route, i.target, i.queued]), [["/orders", "pull", 3], ["/billing", "pull", 1]]);
  assert.is(reply.body.items[0].oldest_queued_age_seconds, 1800);
  assert.is(reply.body.oldest_queued_age_seconds, 1800);
  const limited = await h.request("GET", "/backlog/top_queued?limit=1");
  assert.equal([limited.body.items.length, limited.body.truncated], [1, true]);
  const selected = await h.request("GET", "/backlog/top_queued?route=/billing");
  assert.equal(selected.body.selector, { route: "/billing" });
  assert.equal(selected.body.items.map((i: any) => i.route), ["/billing"]);
});

backlog("oldest_queued lists queued messages oldest first", async ({ h }) => {
  const reply = await h.request("GET", "/backlog/oldest_queued?limit=2");
  assert.is(reply.status, 200);
  assert.equal(reply.body.items.map((i: any) => [i.id, i.oldest_queued_age_seconds]), [["o1", 1800], ["o2", 1200]]);
  assert.equal([reply.body.returned, reply.body.truncated], [2, true]);
});

backlog("oldest_queued reports the selector's earliest next_run_at and ready lag, as top_queued does, past the page", async ({ h }) => {
  const now = h.clock.now();
  await h.seed([message("late", "/orders", { receivedAtMs: now - MINUTE, nextRunAtMs: now - 40 * MINUTE })]);
  const oldest = await h.request("GET", "/backlog/oldest_queued?route=/orders&limit=1");
  assert.equal(oldest.body.items.map((i: any) => i.id), ["o1"]);
  const top = await h.request("GET", "/backlog/top_queued?route=/orders");
  assert.is(oldest.body.ready_lag_seconds, 2400);
  assert.is(oldest.body.earliest_queued_next_run_at, new Date(now - 40 * MINUTE).toISOString());
  assert.equal([oldest.body.earliest_queued_next_run_at, oldest.body.ready_lag_seconds], [top.body.earliest_queued_next_run_at, top.body.ready_lag_seconds]);
});

backlog("aging_summary's top-level ages are the selector's, past the buckets its limit returns", async ({ h }) => {
  const now = h.clock.now();
  await h.seed([message("lagging", "/billing", { receivedAtMs: now - 50 * MINUTE, nextRunAtMs: now - 45 * MINUTE })]);
  const [limited, top] = [await h.request("GET", "/backlog/aging_summary?limit=1&states=queued"), await h.request("GET", "/backlog/top_queued")];
  assert.equal(limited.body.items.map((i: any) => i.route), ["/orders"], "the /billing bucket is past the limit");
  assert.equal([limited.body.oldest_queued_age_seconds, limited.body.ready_lag_seconds], [3000, 2700]);
  assert.equal([limited.body.oldest_queued_received_at, limited.body.earliest_queued_next_run_at], [top.body.oldest_queued_received_at, top.body.earliest_queued_next_run_at]);
});

backlog("aging_summary groups by bucket for the asked states", async ({ h }) => {
  const reply = await h.request("GET", "/backlog/aging_summary?states=queued,dead");
  assert.is(reply.status, 200);
  assert.equal(reply.body.states, ["queued", "dead"]);
  const billing = reply.body.items.find((i: any) => i.route === "/billing");
  assert.equal(billing.state_counts, { queued: 1, leased: 0, dead: 1 });
  assert.is(reply.body.age_sample_count, 5);
  assert.ok(reply.body.age_percentiles_seconds.p99 >= reply.body.age_percentiles_seconds.p50);
  const deadOnly = await h.request("GET", "/backlog/aging_summary?states=dead");
  assert.is(deadOnly.body.age_sample_count, 1);
});

backlog("trends rolls samples into steps and derives signals and operator actions", async ({ h }) => {
  for (let i = 0; i < 5; i++) {
    await h.store.enqueue([message(`t${i}a`, "/orders"), message(`t${i}b`, "/orders"), message(`t${i}c`, "/orders")]);
    await h.store.captureTrendSample();
    h.clock.advance(MINUTE);
  }
  const reply = await h.request("GET", "/backlog/trends?window=15m&step=1m");
  assert.is(reply.status, 200);
  assert.equal([reply.body.window, reply.body.step, reply.body.point_count, reply.body.sample_count, reply.body.non_empty_point_count], ["900s", "60s", 15, 5, 5]);
  assert.is(reply.body.latest_total, 20);
  assert.is(reply.body.items.length, 15);
  assert.equal(reply.body.signals.status, "warn");
  assert.ok(reply.body.signals.active_alerts.includes("sustained_growth"));
  assert.ok(reply.body.operator_actions.some((a: any) => a.id === "backlog_growth_triage"));
  const defaults = await h.request("GET", "/backlog/trends");
  assert.equal([defaults.body.window, defaults.body.step, defaults.body.point_count], ["3600s", "300s", 12]);
  const until = new Date(h.clock.now() - 10 * MINUTE).toISOString();
  const earlier = await h.request("GET", `/backlog/trends?until=${until}&window=1h&step=1h`);
  assert.equal([earlier.body.until, earlier.body.point_count], [until, 1]);
});

backlog("bounds of every backlog parameter are 400 invalid_query", async ({ h }) => {
  const cases = [
    "/backlog/top_queued?limit=0",
    "/backlog/top_queued?limit=1001",
    "/backlog/top_queued?route=orders",
    "/backlog/oldest_queued?limit=-1",
    "/backlog/aging_summary?states=queued,sleeping",
    "/backlog/aging_summary?states=",
    "/backlog/aging_summary?states=canceled",
    "/backlog/trends?window=169h",
    "/backlog/trends?window=0",
    "/backlog/trends?window=soon",
    "/backlog/trends?step=30s",
    "/backlog/trends?step=2h",
    "/backlog/trends?until=tomorrow",
    "/backlog/trends?limit=5",
  ];
  for (const path of cases) {
    const reply = await h.request("GET", path);
    assert.equal([reply.status, reply.body.code], [400, "invalid_query"], path);
  }
  for (const path of ["/backlog/trends?window=168h&step=1h", "/backlog/trends?step=1m", "/backlog/top_queued?limit=1000"]) {
    assert.is((await h.request("GET", path)).status, 200, path);
  }
});

backlog.run();
