import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { PublishPolicy, Route } from "../../compiler/ir.js";
import { buildConfig, deliverRoute, pullRoute } from "./ir-builder.js";
import { b64, message, startHarness, type Backend, type Harness } from "./harness.js";

function routes(): Route[] {
  return [
    pullRoute("/orders", { maxBodyBytes: 16, maxHeadersBytes: 40 }),
    deliverRoute("/fanout", ["https://a.example/in", "https://b.example/in"]),
    deliverRoute("/single", ["https://c.example/in"]),
    pullRoute("/closed", { publish: { enabled: false, direct: true, managed: true } }),
    pullRoute("/nodirect", { publish: { enabled: true, direct: false, managed: true } }),
    pullRoute("/billing", { application: "shop", endpointName: "billing" }),
    pullRoute("/nomanaged", { application: "shop", endpointName: "nomanaged", publish: { enabled: true, direct: true, managed: false } }),
    pullRoute("/off", { application: "shop", endpointName: "off", publish: { enabled: false, direct: true, managed: true } }),
    deliverRoute("/multi", ["https://d.example/in", "https://e.example/in"], { application: "shop", endpointName: "multi" }),
  ];
}

const item = (id: string, route: string, extra: Record<string, unknown> = {}) => ({ id, route, payload_b64: b64(`p-${id}`), ...extra });

async function storedIds(h: Harness): Promise<string[]> {
  return (await h.store.listMessages({ limit: 1000 })).map((m) => m.id).sort();
}

async function counter(h: Harness, name: keyof Harness["metrics"]["publish"]): Promise<number> {
  const metric = await h.metrics.publish[name].get();
  return metric.values.reduce((sum, v) => sum + v.value, 0);
}

for (const backend of ["sqlite", "memory"] as Backend[]) {
  const publish = suite<{ h: Harness }>(`admin publish (${backend})`);
  const start = async (context: { h: Harness }, policy: Partial<PublishPolicy> = {}, maxDepth?: number) => {
    context.h = await startHarness({ config: buildConfig(routes(), policy), backend, maxDepth });
    return context.h;
  };
  publish.after.each(async ({ h }) => h?.close());

  publish("global publish stores the batch with the callers' ids, resolving a single target", async (context) => {
    const h = await start(context);
    const reply = await h.request("POST", "/messages/publish", {
      body: { items: [item("m1", "/orders", { headers: { "X-Kind": "a" } }), item("m2", "/single"), item("m3", "/fanout", { target: "https://b.example/in" })] },
      headers: { "X-Spool-Audit-Actor": "ci" },
    });
    assert.is(reply.status, 200);
    assert.equal(reply.body, { published: 3, ids: ["m1", "m2", "m3"], audit: { reason: "test", actor: "ci" } });
    const views = await h.store.getMessages(["m1", "m2", "m3"], { payload: true, headers: true });
    const byId = Object.fromEntries(views.map((v) => [v.id, v]));
    assert.is(byId.m1.target, "pull");
    assert.is(byId.m1.state, "queued");
    assert.is(Buffer.from(byId.m1.payload!).toString(), "p-m1");
    assert.equal(byId.m1.headers, { "X-Kind": "a" });
    assert.is(byId.m2.target, "https://c.example/in");
    assert.is(byId.m3.target, "https://b.example/in");
    assert.is(h.audits.length, 1);
    assert.is(h.audits[0].tool, "messages_publish");
    assert.equal(h.audits[0].metadata, { kind: "publish", operation: "messages_publish", mode: "direct", items: 3, published: 3 });
    assert.is(await counter(h, "accepted"), 3);
    assert.is(await counter(h, "rejected"), 0);
  });

  publish("published headers are stored without the credential headers, as ingress stores them", async (context) => {
    const h = await start(context);
    const headers = { Authorization: "Bearer publisher-secret", cookie: "sid=1", "Proxy-Authorization": "Basic eA==", "X-Kind": "a" };
    const reply = await h.request("POST", "/messages/publish", { body: { items: [item("cred", "/single", { headers })] } });
    assert.is(reply.status, 200);
    const [view] = await h.store.getMessages(["cred"], { headers: true });
    assert.equal(view.headers, { "X-Kind": "a" });
  });

  publish("every refusal names its code and item_index and stores nothing", async (context) => {
    const h = await start(context);
    await h.seed([message("existing", "/orders")]);
    const ok = (id: string) => item(id, "/orders");
    const cases: [unknown[], number, string, number | undefined][] = [
      [[ok("a"), item("b", "/nowhere")], 404, "route_not_found", 1],
      [[ok("a"), item("b", "orders")], 400, "invalid_body", 1],
      [[ok("a"), { id: "b", payload_b64: b64("x") }], 400, "invalid_body", 1],
      [[ok("a"), item("b", "/fanout")], 400, "target_unresolvable", 1],
      [[item("b", "/single", { target: "https://elsewhere/" })], 400, "target_unresolvable", 0],
      [[ok("a"), item("b", "/billing")], 400, "scoped_publish_required", 1],
      [[ok("a"), item("b", "/closed")], 403, "route_publish_disabled", 1],
      [[ok("a"), item("b", "/nodirect")], 403, "route_publish_disabled", 1],
      [[ok("a"), { id: "b", route: "/orders", payload_b64: b64("x".repeat(17)) }], 413, "payload_too_large", 1],
      [[ok("a"), item("b", "/orders", { headers: { "X-Long": "v".repeat(40) } })], 413, "headers_too_large", 1],
      [[ok("a"), item("b", "/orders", { headers: { "Bad Name": "v" } })], 400, "invalid_header", 1],
      [[ok("a"), item("b", "/orders", { headers: { "X-Ok": "a\r\nInjected: 1" } })], 400, "invalid_header", 1],
      [[ok("a"), { id: "b", route: "/orders", payload_b64: "not base64!" }], 400, "invalid_payload_b64", 1],
      [[ok("a"), { id: "b", route: "/orders", payload_b64: "QUJD", received_at: "yesterday" }], 400, "invalid_received_at", 1],
      [[ok("a"), { id: "b", route: "/orders", payload_b64: "QUJD", next_run_at: "2030-13-01T00:00:00Z" }], 400, "invalid_next_run_at", 1],
      // Instants an offset carries outside the years 0000–9999, which no answer could print back.
      [[ok("a"), { id: "b", route: "/orders", payload_b64: "QUJD", received_at: "9999-12-31T23:59:59-23:59" }], 400, "invalid_received_at", 1],
      [[ok("a"), { id: "b", route: "/orders", payload_b64: "QUJD", next_run_at: "0000-01-01T00:00:00+01:00" }], 400, "invalid_next_run_at", 1],
      // A lone surrogate would be stored as U+FFFD: the listed id would name no message.
      [[ok("a"), item("b\ud800", "/orders")], 400, "invalid_body", 1],
      [[ok("a"), ok("b"), ok("a")], 409, "duplicate_id", 2],
      [[ok("a"), ok("existing")], 409, "duplicate_id", 1],
      [[ok("a"), { id: "", route: "/orders", payload_b64: "" }], 400, "invalid_body", 1],
      [[ok("a"), { ...ok("b"), application: "shop" }], 400, "invalid_body", 1],
      [[], 400, "invalid_body", undefined],
    ];
    for (const [items, status, code, itemIndex] of cases) {
      const reply = await h.request("POST", "/messages/publish", { body: { items } });
      const label = `${code} ${JSON.stringify(items).slice(0, 80)}`;
      assert.is(reply.status, status, label);
      assert.is(reply.body.code, code, label);
      assert.is(reply.body.item_index, itemIndex, label);
    }
    assert.equal(await storedIds(h), ["existing"], "a refused batch writes nothing");
    assert.equal(h.audits.map((a) => a.result), cases.map((c) => c[2]));
    assert.is(await counter(h, "rejected"), cases.length);
    assert.is(await counter(h, "rejectedConflict"), 2);
    assert.is(await counter(h, "rejectedPolicy"), 3);
    assert.is(await counter(h, "accepted"), 0);
  });

  publish("a batch of 1000 is accepted and 1001 is refused", async (context) => {
    const h = await start(context);
    const items = Array.from({ length: 1001 }, (_, i) => item(`n${i}`, "/single"));
    const refused = await h.request("POST", "/messages/publish", { body: { items } });
    assert.is(refused.status, 400);
    const accepted = await h.request("POST", "/messages/publish", { body: { items: items.slice(0, 1000) } });
    assert.is(accepted.status, 200);
    assert.is(accepted.body.published, 1000);
  });

  publish("publish_policy switches refuse with their 403 codes", async (context) => {
    let h = await start(context, { direct: false });
    let reply = await h.request("POST", "/messages/publish", { body: { items: [item("a", "/orders")] } });
    assert.is(reply.status, 403);
    assert.is(reply.body.code, "global_publish_disabled");
    await h.close();
    h = await start(context, { allowPullRoutes: false });
    reply = await h.request("POST", "/messages/publish", { body: { items: [item("a", "/single"), item("b", "/orders")] } });
    assert.equal([reply.status, reply.body.code, reply.body.item_index], [403, "pull_route_publish_disabled", 1]);
    assert.equal(await storedIds(h), []);
    await h.close();
    h = await start(context, { allowDeliverRoutes: false });
    reply = await h.request("POST", "/messages/publish", { body: { items: [item("a", "/single")] } });
    assert.equal([reply.status, reply.body.code], [403, "deliver_route_publish_disabled"]);
    reply = await h.request("POST", "/applications/shop/endpoints/multi/messages/publish", { body: { items: [{ id: "x", payload_b64: "" }] } });
    assert.equal([reply.status, reply.body.code], [403, "deliver_route_publish_disabled"]);
    assert.is(await counter(h, "rejectedPolicy"), 2);
    assert.is(await counter(h, "scopedRejected"), 1);
  });

  publish("queue full is 429 queue_full and stores nothing", async (context) => {
    const h = await start(context, {}, 3);
    await h.seed([message("q1", "/orders"), message("q2", "/orders")]);
    const reply = await h.request("POST", "/messages/publish", { body: { items: [item("a", "/single"), item("b", "/single")] } });
    assert.is(reply.status, 429);
    assert.is(reply.body.code, "queue_full");
    assert.equal(await storedIds(h), ["q1", "q2"]);
    assert.is(await counter(h, "rejectedQueueFull"), 1);
  });

  publish("endpoint-scoped publish resolves route and target from the mapping", async (context) => {
    const h = await start(context);
    const reply = await h.request("POST", "/applications/shop/endpoints/billing/messages/publish", {
      body: { items: [{ id: "s1", payload_b64: b64("hello"), headers: { "Content-Type": "text/plain" } }, { id: "s2", payload_b64: "" }] },
    });
    assert.is(reply.status, 200);
    assert.equal(reply.body.published, 2);
    assert.equal(reply.body.ids, ["s1", "s2"]);
    const [stored] = await h.store.getMessages(["s1"]);
    assert.equal([stored.route, stored.target], ["/billing", "pull"]);
    assert.equal(h.audits[0].metadata, {
      kind: "publish",
      operation: "messages_publish",
      mode: "managed",
      items: 2,
      published: 2,
      scope: { application: "shop", endpoint_name: "billing", route: "/billing" },
    });
    assert.is(await counter(h, "scopedAccepted"), 2);
  });

  publish("endpoint-scoped publish to a multi-target endpoint: each item names one of its targets", async (context) => {
    const h = await start(context);
    const reply = await h.request("POST", "/applications/shop/endpoints/multi/messages/publish", {
      body: { items: [{ id: "m1", payload_b64: "", target: "https://e.example/in" }, { id: "m2", payload_b64: "", target: "https://d.example/in" }] },
    });
    assert.equal([reply.status, reply.body.ids], [200, ["m1", "m2"]]);
    const stored = await h.store.getMessages(["m1", "m2"]);
    assert.equal(stored.map((m) => [m.id, m.route, m.target]).sort(), [
      ["m1", "/multi", "https://e.example/in"],
      ["m2", "/multi", "https://d.example/in"],
    ]);
    const single = await h.request("POST", "/applications/shop/endpoints/billing/messages/publish", { body: { items: [{ id: "s1", payload_b64: "", target: "pull" }] } });
    assert.equal([single.status, single.body.ids], [200, ["s1"]], "a single-target endpoint accepts its own target named");
  });

  publish("endpoint-scoped publish refusals", async (context) => {
    const h = await start(context);
    const ok = { id: "x", payload_b64: b64("x") };
    const cases: [string, unknown[], number, string][] = [
      ["/applications/shop/endpoints/nope/messages/publish", [ok], 404, "managed_endpoint_not_found"],
      ["/applications/shop/endpoints/nomanaged/messages/publish", [ok], 403, "scoped_publish_disabled"],
      ["/applications/shop/endpoints/off/messages/publish", [ok], 403, "route_publish_disabled"],
      ["/applications/shop/endpoints/multi/messages/publish", [ok], 400, "target_unresolvable"],
      ["/applications/shop/endpoints/billing/messages/publish", [{ ...ok, route: "/billing" }], 400, "selector_scope_forbidden"],
      ["/applications/shop/endpoints/billing/messages/publish", [{ ...ok, target: "https://d.example/in" }], 400, "managed_target_mismatch"],
      ["/applications/shop/endpoints/multi/messages/publish", [{ ...ok, target: "https://f.example/in" }], 400, "managed_target_mismatch"],
      ["/applications/shop/endpoints/billing/messages/publish", [{ ...ok, endpoint_name: "billing" }], 400, "selector_scope_forbidden"],
      ["/applications/shop/endpoints/billing/messages/publish", [{ ...ok, received_at: "2024-01-01T00:00:00Z" }], 400, "invalid_body"],
    ];
    for (const [path, items, status, code] of cases) {
      const reply = await h.request("POST", path, { body: { items } });
      assert.is(reply.status, status, `${path} ${code}`);
      assert.is(reply.body.code, code, `${path} ${code}`);
    }
    const second = await h.request("POST", "/applications/shop/endpoints/billing/messages/publish", { body: { items: [ok, { ...ok, id: "y", route: "/billing" }] } });
    assert.equal([second.status, second.body.code, second.body.item_index], [400, "selector_scope_forbidden", 1], "the offending item is named");
    assert.equal(await storedIds(h), []);
    await h.close();
    const off = await start(context, { managed: false });
    const reply = await off.request("POST", "/applications/shop/endpoints/billing/messages/publish", { body: { items: [ok] } });
    assert.equal([reply.status, reply.body.code], [403, "scoped_publish_disabled"]);
  });

  publish("publish without an audit reason is refused, audited and counted", async (context) => {
    const h = await start(context);
    const reply = await h.request("POST", "/messages/publish", { body: { items: [item("a", "/orders")] }, reason: null });
    assert.is(reply.body.code, "audit_reason_required");
    assert.equal(await storedIds(h), []);
    assert.equal(h.audits.map((a) => [a.tool, a.result]), [["messages_publish", "audit_reason_required"]]);
    assert.is(await counter(h, "rejected"), 1);
  });

  publish.run();
}
