import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildConfig, pullRoute } from "./ir-builder.js";
import { message, startHarness, type Backend, type Harness } from "./harness.js";

const MINUTE = 60_000;

for (const backend of ["sqlite", "memory"] as Backend[]) {
  const reads = suite<{ h: Harness }>(`admin queue reads (${backend})`);

  reads.before.each(async (context) => {
    const config = buildConfig([
      pullRoute("/orders"),
      pullRoute("/billing", { application: "shop", endpointName: "billing" }),
    ]);
    context.h = await startHarness({ config, backend });
    const now = context.h.clock.now();
    await context.h.seed([
      message("o-old", "/orders", { receivedAtMs: now - 3 * MINUTE, headers: { "x-kind": "old" } }),
      message("o-mid", "/orders", { receivedAtMs: now - 2 * MINUTE }),
      message("o-new", "/orders", { receivedAtMs: now - 1 * MINUTE }),
      message("b-1", "/billing", { receivedAtMs: now - 30_000 }),
    ]);
    // o-old becomes dead, o-mid leased.
    const [leasedOld] = await context.h.store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE });
    await context.h.store.nack([leasedOld.leaseId], { dead: true, reason: "bad payload" });
    await context.h.store.dequeue({ route: "/orders", batch: 1, leaseTtlMs: MINUTE });
  });
  reads.after.each(async ({ h }) => h.close());

  reads("GET /messages lists newest first with id, route, target, state", async ({ h }) => {
    const reply = await h.request("GET", "/messages?route=/orders");
    assert.is(reply.status, 200);
    assert.equal(reply.body.items.map((i: any) => [i.id, i.state]), [["o-new", "queued"], ["o-mid", "leased"], ["o-old", "dead"]]);
    const item = reply.body.items[0];
    assert.is(item.route, "/orders");
    assert.is(item.target, "pull");
    assert.is(item.attempt, 0);
    assert.ok(!("payload_b64" in item) && !("headers" in item));
    assert.is(reply.body.items[2].dead_reason, "bad payload");
    assert.ok(reply.body.items[1].lease_until);
  });

  reads("GET /messages filters by state, before and limit and adds payload and headers on request", async ({ h }) => {
    const before = new Date(h.clock.now() - 90_000).toISOString();
    const reply = await h.request("GET", `/messages?route=/orders&before=${before}&limit=1&include_payload=true&include_headers=1`);
    assert.is(reply.status, 200);
    assert.equal(reply.body.items.map((i: any) => i.id), ["o-mid"]);
    assert.is(Buffer.from(reply.body.items[0].payload_b64, "base64").toString(), "body of o-mid");
    assert.equal(reply.body.items[0].headers, { "content-type": "application/json" });
    const dead = await h.request("GET", "/messages?state=dead");
    assert.equal(dead.body.items.map((i: any) => i.id), ["o-old"]);
  });

  reads("before keeps what was received in its own millisecond when it has digits below the millisecond", async ({ h }) => {
    const midMs = h.clock.now() - 2 * MINUTE;
    const at = new Date(midMs).toISOString();
    const listed = async (before: string) =>
      (await h.request("GET", `/messages?route=/orders&before=${encodeURIComponent(before)}`)).body.items.map((i: any) => i.id);
    assert.equal(await listed(at), ["o-old"], "received at the bound itself is not before it");
    assert.equal(await listed(at.replace("Z", "0001Z")), ["o-mid", "o-old"], "…000.0001 is after …000");
    assert.equal(await listed(at.replace("Z", "999999Z")), ["o-mid", "o-old"]);
    const preview = await h.request("POST", "/messages/cancel_by_filter", { body: { route: "/orders", state: "leased", before: at.replace("Z", "0001Z"), preview_only: true } });
    assert.equal([preview.status, preview.body.matched], [200, 1], "the filter body's before rounds the same way (o-mid is the leased one)");
  });

  reads("GET /messages with a managed selector lists that endpoint's route only", async ({ h }) => {
    const reply = await h.request("GET", "/messages?application=shop&endpoint_name=billing");
    assert.equal(reply.body.items.map((i: any) => i.id), ["b-1"]);
    const missing = await h.request("GET", "/messages?application=shop&endpoint_name=nope");
    assert.is(missing.status, 404);
    assert.is(missing.body.code, "managed_endpoint_not_found");
  });

  reads("endpoint-scoped GET messages lists its route and refuses selector fields with selector_scope_forbidden", async ({ h }) => {
    const reply = await h.request("GET", "/applications/shop/endpoints/billing/messages?state=queued");
    assert.is(reply.status, 200);
    assert.equal(reply.body.items.map((i: any) => i.id), ["b-1"]);
    for (const query of ["route=/orders", "application=shop", "endpoint_name=billing"]) {
      const refused = await h.request("GET", `/applications/shop/endpoints/billing/messages?${query}`);
      assert.is(refused.status, 400, query);
      assert.is(refused.body.code, "selector_scope_forbidden");
    }
    const unknown = await h.request("GET", "/applications/shop/endpoints/nope/messages");
    assert.is(unknown.status, 404);
    assert.is(unknown.body.code, "managed_endpoint_not_found");
  });

  reads("GET /dlq lists dead letters with dead_reason", async ({ h }) => {
    const reply = await h.request("GET", "/dlq?route=/orders&include_payload=1");
    assert.is(reply.status, 200);
    assert.is(reply.body.items.length, 1);
    const item = reply.body.items[0];
    assert.is(item.id, "o-old");
    assert.is(item.dead_reason, "bad payload");
    assert.is(item.attempt, 1);
    assert.is(Buffer.from(item.payload_b64, "base64").toString(), "body of o-old");
    assert.ok(!("state" in item));
  });

  reads("GET /attempts lists attempt records filtered by outcome and event_id", async ({ h }) => {
    await h.store.recordAttempts([
      { messageId: "o-new", route: "/orders", target: "https://a.example/in", attempt: 1, statusCode: 503, outcome: "retry" },
      { messageId: "o-new", route: "/orders", target: "https://a.example/in", attempt: 2, statusCode: 200, outcome: "acked" },
      { messageId: "b-1", route: "/billing", target: "https://b.example/in", attempt: 1, error: "timeout", outcome: "dead", deadReason: "max_retries" },
    ]);
    const all = await h.request("GET", "/attempts");
    assert.is(all.status, 200);
    assert.is(all.body.items.length, 3);
    const retries = await h.request("GET", "/attempts?outcome=retry&event_id=o-new");
    assert.equal(retries.body.items.map((i: any) => [i.event_id, i.attempt, i.outcome, i.status_code, i.target]), [["o-new", 1, "retry", 503, "https://a.example/in"]]);
    const scoped = await h.request("GET", "/attempts?application=shop&endpoint_name=billing");
    assert.equal(scoped.body.items.map((i: any) => [i.event_id, i.dead_reason, i.error]), [["b-1", "max_retries", "timeout"]]);
  });

  reads("invalid query values are 400 invalid_query", async ({ h }) => {
    const cases = [
      "/messages?route=orders",
      "/messages?limit=0",
      "/messages?limit=1001",
      "/messages?limit=ten",
      "/messages?state=sleeping",
      "/messages?before=yesterday",
      "/messages?before=2030-02-30T00:00:00Z",
      "/messages?include_payload=maybe",
      "/messages?route=/a&application=shop&endpoint_name=billing",
      "/messages?application=shop",
      "/messages?limt=5",
      "/messages?limit=5&limit=6",
      "/dlq?route=orders",
      "/dlq?limit=5000",
      "/attempts?outcome=delivered",
      "/attempts?before=2030-01-01",
    ];
    for (const path of cases) {
      const reply = await h.request("GET", path);
      assert.is(reply.status, 400, path);
      assert.is(reply.body.code, "invalid_query", path);
    }
  });

  reads("limit 1000 and an exact RFC 3339 offset are accepted", async ({ h }) => {
    assert.is((await h.request("GET", "/messages?limit=1000")).status, 200);
    assert.is((await h.request("GET", `/messages?before=${encodeURIComponent("2030-01-01T02:00:00.5+02:00")}`)).status, 200);
  });

  reads("unsupported methods are 405 method_not_allowed with Allow; unknown paths are not handled", async ({ h }) => {
    for (const [method, path] of [["GET", "/messages/publish"], ["DELETE", "/dlq"], ["POST", "/messages"], ["PUT", "/backlog/trends"], ["POST", "/management/model"]]) {
      const reply = await h.request(method, path);
      assert.is(reply.status, 405, `${method} ${path}`);
      assert.is(reply.body.code, "method_not_allowed");
      assert.ok(reply.headers.get("allow"));
    }
    const unknown = await h.request("GET", "/nothing/here");
    assert.is(unknown.status, 404);
    assert.is(unknown.body.code, "not_found");
    assert.is(h.audits.length, 0, "405 and 404 are not mutations and write no audit record");
  });

  reads("reads write no audit record", async ({ h }) => {
    await h.request("GET", "/messages");
    await h.request("GET", "/dlq");
    assert.is(h.audits.length, 0);
  });

  reads.run();
}
