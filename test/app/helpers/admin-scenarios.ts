// Admin API scenarios run against a built `spool run` on any backend (test/app/e2e-admin.test.ts on
// SQLite, test/app/e2e-admin-postgres.test.ts on PostgreSQL). Each scenario owns its routes and
// message ids, so the counts it asserts are exact whatever ran before it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as assert from "uvu/assert";
import { adminClient, b64, minutesAgo, type AdminClient } from "./admin-e2e.js";
import { call, eventually, pullCall } from "./http.js";
import type { SpoolProcess } from "./spool-process.js";
import type { urls } from "./spoolfile.js";

export interface AdminRun {
  proc: SpoolProcess;
  urls: ReturnType<typeof urls>;
  admin: AdminClient;
  /** Where /hooks/push delivers: a receiver that answers every request with 400. */
  pushTarget: string;
}

export function adminRun(proc: SpoolProcess, base: ReturnType<typeof urls>, pushTarget: string): AdminRun {
  return { proc, urls: base, admin: adminClient(base.admin), pushTarget };
}

/** A local push target that refuses everything with 400 (a non-retryable answer). */
export async function startRefusingReceiver(): Promise<{ url: string; hits(): number; close(): void }> {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      hits++;
      res.statusCode = 400;
      res.end("refused");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/in`, hits: () => hits, close: () => server.close() };
}

/**
 * The routes every scenario uses (one route per scenario). `backend` adds `queue <backend>` to the
 * first route, which makes it the instance's backend.
 */
export function adminRoutes(pushTarget: string, options: { backend?: "postgres" } = {}): string {
  const queue = options.backend ? `\n  queue ${options.backend}` : "";
  return `# Routes of the Admin API end-to-end tests.
defaults {
  egress {
    https_only off
    dns_rebind_protection off
  }
}

# Lifecycle by ids and the DLQ.
/hooks/life {${queue}
  pull { path /life }
}

# Filter mutations.
/hooks/bulk {
  pull { path /bulk }
}

# Global publish.
/hooks/pub {
  pull { path /pub }
}

# Backlog analytics.
/hooks/backlog {
  pull { path /backlog }
}

# The shop's orders endpoint (managed).
/hooks/orders {
  application "shop"
  endpoint_name "orders"
  pull { path /orders }
}

# Pushed to a receiver that answers 400: dead at once with no_retry.
/hooks/push {
  deliver "${pushTarget}" {
    retry exponential max 2 base 50ms cap 100ms jitter 0
    timeout 2s
  }
}
`;
}

const ORDERS_SCOPE = { application: "shop", endpoint_name: "orders", route: "/hooks/orders" };

type Item = Record<string, any>;

async function listRoute(run: AdminRun, route: string, query = ""): Promise<Item[]> {
  const reply = await run.admin(`/messages?route=${encodeURIComponent(route)}${query}`);
  assert.is(reply.status, 200, reply.text);
  return reply.json.items;
}

async function statesOf(run: AdminRun, route: string): Promise<Record<string, string>> {
  return Object.fromEntries((await listRoute(run, route)).map((item) => [item.id, item.state]));
}

async function publishTo(run: AdminRun, route: string, ids: readonly string[], minutesBack: (index: number) => number): Promise<void> {
  const items = ids.map((id, index) => ({ id, route, payload_b64: b64(`payload of ${id}`), received_at: minutesAgo(minutesBack(index)) }));
  const reply = await run.admin("/messages/publish", { body: { items } });
  assert.equal([reply.status, reply.json?.published], [200, ids.length], reply.text);
}

/** Ids in, by-id lifecycle and DLQ requeue/delete with exact counts and the states they leave. */
export async function lifecycleByIdsAndDlq(run: AdminRun): Promise<void> {
  const route = "/hooks/life";
  const ids = ["life-1", "life-2", "life-3", "life-4"];
  await publishTo(run, route, ids, (i) => 10 - i);
  const { items } = (await pullCall(`${run.urls.pull}/life`, "dequeue", "pull-token", { batch: 10 })).json;
  assert.equal(items.map((i: Item) => i.id).sort(), ids);
  const lease = (id: string) => items.find((i: Item) => i.id === id).lease_id;
  const dead = await pullCall(`${run.urls.pull}/life`, "nack", "pull-token", { lease_ids: [lease("life-1"), lease("life-2")], dead: true, reason: "e2e poison" });
  assert.equal([dead.status, dead.json], [200, { succeeded: 2 }]);
  const back = await pullCall(`${run.urls.pull}/life`, "nack", "pull-token", { lease_ids: [lease("life-3"), lease("life-4")] });
  assert.equal([back.status, back.json], [200, { succeeded: 2 }]);
  assert.equal(await statesOf(run, route), { "life-1": "dead", "life-2": "dead", "life-3": "queued", "life-4": "queued" });

  const dlq = await run.admin(`/dlq?route=${route}`);
  assert.is(dlq.status, 200);
  assert.equal(dlq.json.items.map((i: Item) => [i.id, i.dead_reason]).sort(), [["life-1", "e2e poison"], ["life-2", "e2e poison"]]);
  assert.equal(Object.keys(dlq.json.items[0]).sort(), ["attempt", "dead_reason", "id", "received_at", "route", "target"]);

  const requeued = await run.admin("/dlq/requeue", { body: { ids: ["life-1", "no-such-message"] } });
  assert.equal([requeued.status, requeued.json], [200, { requeued: 1, audit: { reason: "e2e", request_id: requeued.requestId } }]);
  const afterRequeue = (await listRoute(run, route)).find((i) => i.id === "life-1")!;
  assert.equal([afterRequeue.state, afterRequeue.attempt], ["queued", 0], "a DLQ requeue resets attempt");

  const deleted = await run.admin("/dlq/delete", { body: { ids: ["life-2", "life-3"] } });
  assert.equal([deleted.status, deleted.json.deleted], [200, 1], "only dead messages are deleted");
  assert.equal((await run.admin(`/dlq?route=${route}`)).json.items, []);

  const canceled = await run.admin("/messages/cancel", { body: { ids: ["life-1", "life-3"] } });
  assert.equal([canceled.status, canceled.json.canceled], [200, 2]);
  const attemptBefore = (await listRoute(run, route)).find((i) => i.id === "life-3")!.attempt;
  const resumed = await run.admin("/messages/resume", { body: { ids: ["life-3", "life-4"] } });
  assert.equal([resumed.status, resumed.json.resumed], [200, 1], "only canceled messages resume");
  assert.is((await listRoute(run, route)).find((i) => i.id === "life-3")!.attempt, attemptBefore, "resume keeps attempt");
  const requeuedById = await run.admin("/messages/requeue", { body: { ids: ["life-1", "life-1", "life-4"] } });
  assert.equal([requeuedById.status, requeuedById.json.requeued], [200, 1], "duplicates merged; a queued message is not requeued");
  assert.equal(await statesOf(run, route), { "life-1": "queued", "life-3": "queued", "life-4": "queued" });
}

/** Filter mutations: preview counts without changing, execute changes exactly `limit`, scoped and managed selectors. */
export async function filterPreviewThenExecute(run: AdminRun): Promise<void> {
  const route = "/hooks/bulk";
  const ids = ["bulk-1", "bulk-2", "bulk-3", "bulk-4", "bulk-5"];
  await publishTo(run, route, ids, (i) => 10 - i);

  const preview = await run.admin("/messages/cancel_by_filter", { body: { route, preview_only: true } });
  assert.equal([preview.status, preview.json], [200, { matched: 5, changed: 0, preview_only: true, audit: { reason: "e2e", request_id: preview.requestId } }]);
  assert.is((await listRoute(run, route, "&state=queued")).length, 5, "a preview changes nothing");
  const before = await run.admin("/messages/cancel_by_filter", { body: { route, before: minutesAgo(7.5), preview_only: true } });
  assert.is(before.json.matched, 3, "before selects by received_at");

  const executed = await run.admin("/messages/cancel_by_filter", { body: { route, limit: 3 } });
  assert.equal([executed.status, executed.json.matched, executed.json.changed, executed.json.preview_only], [200, 3, 3, false]);
  assert.equal(await statesOf(run, route), { "bulk-1": "canceled", "bulk-2": "canceled", "bulk-3": "canceled", "bulk-4": "queued", "bulk-5": "queued" }, "oldest first");
  const requeuePreview = await run.admin("/messages/requeue_by_filter", { body: { route, state: "canceled", preview_only: true } });
  assert.equal([requeuePreview.json.matched, requeuePreview.json.changed], [3, 0]);
  const resumed = await run.admin("/messages/resume_by_filter", { body: { route } });
  assert.equal([resumed.status, resumed.json.matched, resumed.json.changed], [200, 3, 3]);
  assert.equal(Object.values(await statesOf(run, route)), ["queued", "queued", "queued", "queued", "queued"]);

  for (const body of [{ preview_only: true }, { route: "/hooks/orders", preview_only: true }]) {
    const refused = await run.admin("/messages/cancel_by_filter", { body });
    assert.equal([refused.status, refused.json.code], [400, "managed_selector_required"], JSON.stringify(body));
  }

  // Endpoint-scoped: the path is the selector; a managed selector in a global body acts the same.
  const scoped = "/applications/shop/endpoints/orders/messages";
  const published = await run.admin(`${scoped}/publish`, { body: { items: [{ id: "flt-ord-1", payload_b64: b64("a") }, { id: "flt-ord-2", payload_b64: b64("b") }] } });
  assert.is(published.status, 200, published.text);
  const cancelable = (await run.admin(scoped)).json.items.filter((i: Item) => ["queued", "leased", "dead"].includes(i.state)).length;
  assert.ok(cancelable >= 2);
  const scopedPreview = await run.admin(`${scoped}/cancel_by_filter`, { body: { preview_only: true } });
  assert.equal([scopedPreview.status, scopedPreview.json.matched, scopedPreview.json.changed, scopedPreview.json.scope], [200, cancelable, 0, ORDERS_SCOPE]);
  const scopedRun = await run.admin(`${scoped}/cancel_by_filter`, { body: {} });
  assert.equal([scopedRun.json.matched, scopedRun.json.changed], [cancelable, cancelable]);
  const managedResume = await run.admin("/messages/resume_by_filter", { body: { application: "shop", endpoint_name: "orders" } });
  assert.equal([managedResume.status, managedResume.json.changed, managedResume.json.scope], [200, cancelable, ORDERS_SCOPE]);
  assert.is((await statesOf(run, route))["bulk-1"], "queued", "the scoped filter touched only its route");
}

/** Global and endpoint-scoped publish; a refused batch names its item and writes nothing. */
export async function publishBatches(run: AdminRun): Promise<void> {
  const route = "/hooks/pub";
  const item = (id: string, extra: Item = {}) => ({ id, route, payload_b64: b64(`body ${id}`), ...extra });

  const single = await run.admin("/messages/publish", { body: { items: [item("pub-1", { headers: { "x-e2e": "yes" } })] } });
  assert.equal([single.status, single.json], [200, { published: 1, ids: ["pub-1"], audit: { reason: "e2e", request_id: single.requestId } }]);
  const [stored] = await listRoute(run, route, "&include_payload=1&include_headers=1");
  assert.equal([stored.id, stored.target, stored.state, Buffer.from(stored.payload_b64, "base64").toString(), stored.headers["x-e2e"]], ["pub-1", "pull", "queued", "body pub-1", "yes"]);

  const refusals: [unknown[], number, string, number][] = [
    [[item("pub-2"), item("pub-3"), item("pub-4", { payload_b64: "not base64!" })], 400, "invalid_payload_b64", 2],
    [[item("pub-5"), item("pub-1")], 409, "duplicate_id", 1],
    [[item("pub-6"), item("pub-6")], 409, "duplicate_id", 1],
    [[item("pub-7"), item("pub-8", { received_at: "yesterday" })], 400, "invalid_received_at", 1],
  ];
  for (const [items, status, code, itemIndex] of refusals) {
    const refused = await run.admin("/messages/publish", { body: { items } });
    assert.equal([refused.status, refused.json.code, refused.json.item_index], [status, code, itemIndex], refused.text);
    assert.type(refused.json.detail, "string");
  }
  assert.equal((await listRoute(run, route)).map((i) => i.id), ["pub-1"], "refused batches wrote nothing");

  const later = new Date(Date.now() + 3_600_000).toISOString();
  const batch = await run.admin("/messages/publish", { body: { items: [item("pub-2"), item("pub-3", { next_run_at: later }), item("pub-4")] } });
  assert.equal([batch.status, batch.json.published, batch.json.ids], [200, 3, ["pub-2", "pub-3", "pub-4"]]);
  const listed = await listRoute(run, route);
  assert.equal(listed.map((i) => i.id).sort(), ["pub-1", "pub-2", "pub-3", "pub-4"]);
  assert.is(listed.find((i) => i.id === "pub-3")!.next_run_at, later);

  const scopedPath = "/applications/shop/endpoints/orders/messages";
  const scoped = await run.admin(`${scopedPath}/publish`, { body: { items: [{ id: "ord-1", payload_b64: b64("order") }] } });
  assert.equal([scoped.status, scoped.json.published, scoped.json.ids, scoped.json.scope], [200, 1, ["ord-1"], ORDERS_SCOPE]);
  const scopedRefused = await run.admin(`${scopedPath}/publish`, { body: { items: [{ id: "ord-2", payload_b64: b64("x") }, { id: "ord-3", payload_b64: b64("y"), headers: { "bad header": "x" } }] } });
  assert.equal([scopedRefused.status, scopedRefused.json.code, scopedRefused.json.item_index], [400, "invalid_header", 1]);
  const orders = (await run.admin(scopedPath)).json.items as Item[];
  const ord1 = orders.find((i) => i.id === "ord-1")!;
  assert.equal([ord1.route, ord1.target, ord1.state], ["/hooks/orders", "pull", "queued"]);
  assert.not.ok(orders.some((i) => i.id === "ord-2"), "the refused scoped batch wrote nothing");
}

/** top_queued, oldest_queued, aging_summary and trends for one route. */
export async function backlogEndpoints(run: AdminRun): Promise<void> {
  const route = "/hooks/backlog";
  const ages = [30, 20, 2];
  await publishTo(run, route, ["bk-1", "bk-2", "bk-3"], (i) => ages[i]);
  const listed = await listRoute(run, route);
  const receivedOf = (id: string) => listed.find((i) => i.id === id)!.received_at;

  const top = await run.admin(`/backlog/top_queued?route=${route}`);
  assert.is(top.status, 200, top.text);
  assert.equal([top.json.limit, top.json.truncated, top.json.source_bounded, top.json.selector], [100, false, false, { route }]);
  assert.is(top.json.items.length, 1);
  const bucket = top.json.items[0];
  assert.equal([bucket.route, bucket.target, bucket.queued, bucket.oldest_queued_received_at], [route, "pull", 3, receivedOf("bk-1")]);
  assert.ok(bucket.oldest_queued_age_seconds >= 1800 && bucket.oldest_queued_age_seconds < 1800 + 120, `age ${bucket.oldest_queued_age_seconds}`);
  assert.type(bucket.ready_lag_seconds, "number");

  const oldest = await run.admin(`/backlog/oldest_queued?route=${route}&limit=2`);
  assert.is(oldest.status, 200, oldest.text);
  assert.equal([oldest.json.returned, oldest.json.truncated, oldest.json.queued_total, oldest.json.limit], [2, true, 3, 2]);
  assert.equal(oldest.json.items.map((i: Item) => i.id), ["bk-1", "bk-2"]);
  assert.equal(Object.keys(oldest.json.items[0]).sort(), ["attempt", "id", "next_run_at", "oldest_queued_age_seconds", "ready_lag_seconds", "received_at", "route", "target"]);

  const aging = await run.admin(`/backlog/aging_summary?route=${route}&states=queued,dead`);
  assert.is(aging.status, 200, aging.text);
  assert.equal(aging.json.states, ["queued", "dead"]);
  assert.is(aging.json.items.length, 1);
  assert.equal(aging.json.items[0].state_counts, { queued: 3, leased: 0, dead: 0 });
  assert.equal(aging.json.age_windows, { le_5m: 1, gt_5m_le_15m: 0, gt_15m_le_1h: 2, gt_1h_le_6h: 0, gt_6h: 0 });
  assert.is(aging.json.age_sample_count, 3);
  const { p50, p90, p99 } = aging.json.age_percentiles_seconds;
  assert.ok(p50 <= p90 && p90 <= p99, "percentiles are ordered");

  const trends = await run.admin(`/backlog/trends?route=${route}&window=1h&step=5m`);
  assert.is(trends.status, 200, trends.text);
  assert.equal([trends.json.window, trends.json.step, trends.json.point_count, trends.json.items.length, trends.json.selector], ["3600s", "300s", 12, 12, { route }]);
  assert.type(trends.json.signals, "object");
  assert.ok(Array.isArray(trends.json.operator_actions));
  for (const key of ["bucket_start", "bucket_end", "sample_count", "queued_last", "leased_last", "dead_last", "total_last", "queued_max", "total_max"]) {
    assert.ok(key in trends.json.items[0], `trends point has ${key}`);
  }
  const badStep = await run.admin(`/backlog/trends?route=${route}&step=30s`);
  assert.equal([badStep.status, badStep.json.code], [400, "invalid_query"]);
}

/** A push answered 400 is dead with no_retry: in the DLQ and in GET /attempts. Returns its id. */
export async function pushDeadLetter(run: AdminRun): Promise<string> {
  const posted = await call(`${run.urls.ingress}/hooks/push`, { body: "refuse me" });
  assert.is(posted.status, 202);
  const id = posted.json.ids[0] as string;
  const dead = await eventually(async () => {
    const reply = await run.admin("/dlq?route=/hooks/push");
    return (reply.json.items as Item[]).find((i) => i.id === id);
  }, 15_000, "the pushed message in the DLQ");
  assert.equal([dead.dead_reason, dead.target], ["no_retry", run.pushTarget]);
  const attempts = await run.admin(`/attempts?route=/hooks/push&event_id=${id}`);
  assert.is(attempts.status, 200);
  assert.is(attempts.json.items.length, 1);
  const [attempt] = attempts.json.items;
  assert.equal(
    [attempt.event_id, attempt.route, attempt.target, attempt.attempt, attempt.outcome, attempt.status_code, attempt.dead_reason],
    [id, "/hooks/push", run.pushTarget, 1, "dead", 400, "no_retry"],
  );
  assert.type(attempt.id, "string");
  assert.ok(!Number.isNaN(Date.parse(attempt.created_at)));
  assert.equal((await run.admin(`/attempts?event_id=${id}&outcome=acked`)).json.items, []);
  return id;
}
