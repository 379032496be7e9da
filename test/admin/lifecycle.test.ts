import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildConfig, pullRoute } from "./ir-builder.js";
import { message, startHarness, type Backend, type Harness } from "./harness.js";

const MINUTE = 60_000;

async function states(h: Harness, ids: string[]): Promise<Record<string, string>> {
  const views = await h.store.getMessages(ids);
  return Object.fromEntries(views.map((v) => [v.id, v.state]));
}

async function makeDead(h: Harness, route: string, count: number): Promise<void> {
  const leased = await h.store.dequeue({ route, batch: count, leaseTtlMs: MINUTE });
  await h.store.nack(leased.map((l) => l.leaseId), { dead: true, reason: "broken" });
}

for (const backend of ["sqlite", "memory"] as Backend[]) {
  const byIds = suite<{ h: Harness }>(`admin lifecycle by ids (${backend})`);
  byIds.before.each(async (context) => {
    context.h = await startHarness({ config: buildConfig([pullRoute("/orders"), pullRoute("/other")]), backend });
    await context.h.seed([message("d1", "/orders"), message("d2", "/orders"), message("q1", "/other")]);
    await makeDead(context.h, "/orders", 2);
  });
  byIds.after.each(async ({ h }) => h.close());

  byIds("POST /dlq/requeue requeues dead items, counts only those, merges duplicates and answers the audit", async ({ h }) => {
    const reply = await h.request("POST", "/dlq/requeue", {
      body: { ids: ["d1", "d1", "q1", "ghost"] },
      headers: { "X-Spool-Audit-Actor": "alice", "X-Request-ID": "req-7" },
      reason: "destination fixed",
    });
    assert.is(reply.status, 200);
    assert.equal(reply.body, { requeued: 1, audit: { reason: "destination fixed", actor: "alice", request_id: "req-7" } });
    assert.equal(await states(h, ["d1", "d2", "q1"]), { d1: "queued", d2: "dead", q1: "queued" });
    const [record] = h.audits;
    assert.is(h.audits.length, 1);
    assert.is(record.tool, "dlq_requeue");
    assert.is(record.result, "ok");
    assert.is(record.principal, "alice");
    assert.is(record.role, "admin");
    assert.match(record.input_hash, /^sha256:[0-9a-f]{64}$/);
    assert.equal(record.metadata, { kind: "id_mutation", operation: "dlq_requeue", ids_requested: 4, ids_unique: 3, changed: 1 });
    assert.ok(!Number.isNaN(Date.parse(record.timestamp)));
    assert.is(typeof record.duration_ms, "number");
  });

  byIds("POST /dlq/delete deletes dead items only", async ({ h }) => {
    const reply = await h.request("POST", "/dlq/delete", { body: { ids: ["d2", "q1"] } });
    assert.equal(reply.body.deleted, 1);
    assert.equal(await states(h, ["d1", "d2", "q1"]), { d1: "dead", q1: "queued" });
  });

  byIds("cancel, requeue and resume move items by id through their states", async ({ h }) => {
    const cancel = await h.request("POST", "/messages/cancel", { body: { ids: ["q1", "d1"] } });
    assert.equal(cancel.body.canceled, 2);
    const resume = await h.request("POST", "/messages/resume", { body: { ids: ["q1", "d2"] } });
    assert.equal(resume.body.resumed, 1, "dead d2 is not canceled, so resume skips it");
    const requeue = await h.request("POST", "/messages/requeue", { body: { ids: ["d1", "d2", "q1"] } });
    assert.equal(requeue.body.requeued, 2, "canceled d1 and dead d2; q1 is queued already");
    assert.equal(await states(h, ["d1", "d2", "q1"]), { d1: "queued", d2: "queued", q1: "queued" });
    assert.equal(h.audits.map((a) => a.tool), ["messages_cancel", "messages_resume", "messages_requeue"]);
  });

  byIds("bad id bodies are 400 invalid_body and change nothing", async ({ h }) => {
    const tooMany = Array.from({ length: 1001 }, (_, i) => `x${i}`);
    for (const body of [{ ids: [] }, { ids: tooMany }, { ids: ["d1", ""] }, { ids: "d1" }, { ids: ["d1"], extra: 1 }, {}]) {
      const reply = await h.request("POST", "/dlq/requeue", { body });
      assert.is(reply.status, 400, JSON.stringify(body).slice(0, 40));
      assert.is(reply.body.code, "invalid_body");
    }
    const trailing = await h.request("POST", "/dlq/requeue", { rawBody: '{"ids":["d1"]}{"ids":["d2"]}' });
    assert.is(trailing.status, 400);
    assert.equal(await states(h, ["d1", "d2"]), { d1: "dead", d2: "dead" });
    assert.ok(h.audits.every((a) => a.result === "invalid_body" && a.metadata.kind === "refused"));
    assert.is(h.audits.length, 7);
  });

  byIds("audit reason is required, at most 512 characters, and refusals are audited", async ({ h }) => {
    const missing = await h.request("POST", "/dlq/requeue", { body: { ids: ["d1"] }, reason: null });
    assert.is(missing.status, 400);
    assert.is(missing.body.code, "audit_reason_required");
    const long = await h.request("POST", "/dlq/requeue", { body: { ids: ["d1"] }, reason: "r".repeat(513) });
    assert.is(long.body.code, "audit_reason_required");
    assert.equal(await states(h, ["d1"]), { d1: "dead" });
    const exact = await h.request("POST", "/dlq/requeue", { body: { ids: ["d1"] }, reason: "r".repeat(512) });
    assert.is(exact.status, 200);
    assert.equal(h.audits.map((a) => a.result), ["audit_reason_required", "audit_reason_required", "ok"]);
    assert.is(h.audits[0].principal, "anonymous");
  });

  byIds("an audit reason sent as UTF-8 is echoed as written and measured in characters; Latin-1 bytes stay Latin-1", async ({ h }) => {
    // fetch sends each character of a header value as one byte: this string puts UTF-8 on the wire.
    const asUtf8Bytes = (text: string) => Buffer.from(text, "utf8").toString("latin1");
    const sent = await h.request("POST", "/dlq/requeue", { body: { ids: ["d1"] }, reason: asUtf8Bytes("Grüße ✓") });
    assert.is(sent.status, 200);
    assert.is(sent.body.audit.reason, "Grüße ✓");
    const accented = await h.request("POST", "/dlq/requeue", { body: { ids: ["d1"] }, reason: asUtf8Bytes("é".repeat(300)) });
    assert.is(accented.status, 200, "300 characters (600 bytes) are within 512 characters");
    const tooLong = await h.request("POST", "/dlq/requeue", { body: { ids: ["d1"] }, reason: asUtf8Bytes("é".repeat(513)) });
    assert.is(tooLong.body.code, "audit_reason_required");
    const latin1 = await h.request("POST", "/dlq/requeue", { body: { ids: ["d1"] }, reason: "caf\u00e9" });
    assert.is(latin1.body.audit.reason, "café", "a byte that is not UTF-8 is read as Latin-1");
  });

  byIds.run();

  const policy = suite<{ h: Harness }>(`admin audit policy (${backend})`);
  policy.after.each(async ({ h }) => h.close());

  policy("require_actor, actor_allow/actor_prefix and require_request_id gate every mutation", async (context) => {
    const config = buildConfig([pullRoute("/orders")], { requireActor: true, requireRequestId: true, actorAllow: ["ops-bot"], actorPrefix: ["oncall-"] });
    const h = (context.h = await startHarness({ config, backend }));
    const body = { ids: ["x"] };
    const noActor = await h.request("POST", "/messages/cancel", { body });
    assert.is(noActor.status, 400);
    assert.is(noActor.body.code, "audit_actor_required");
    const stranger = await h.request("POST", "/messages/cancel", { body, headers: { "X-Spool-Audit-Actor": "mallory", "X-Request-ID": "1" } });
    assert.is(stranger.status, 403);
    assert.is(stranger.body.code, "audit_actor_not_allowed");
    const noRequestId = await h.request("POST", "/messages/cancel", { body, headers: { "X-Spool-Audit-Actor": "ops-bot" } });
    assert.is(noRequestId.status, 400);
    assert.is(noRequestId.body.code, "audit_request_id_required");
    for (const actor of ["ops-bot", "oncall-sam"]) {
      const ok = await h.request("POST", "/messages/cancel", { body, headers: { "X-Spool-Audit-Actor": actor, "X-Request-ID": "r-1" } });
      assert.is(ok.status, 200, actor);
      assert.equal(ok.body.audit, { reason: "test", actor, request_id: "r-1" });
    }
    assert.equal(h.audits.map((a) => a.result), ["audit_actor_required", "audit_actor_not_allowed", "audit_request_id_required", "ok", "ok"]);
    assert.is(h.audits[1].principal, "mallory");
  });

  policy("fail_closed refuses an unnamed actor while an actor allowlist is set", async (context) => {
    const config = buildConfig([pullRoute("/orders")], { failClosed: true, actorPrefix: ["oncall-"] });
    const h = (context.h = await startHarness({ config, backend }));
    const refused = await h.request("POST", "/messages/cancel", { body: { ids: ["x"] } });
    assert.is(refused.body.code, "audit_actor_required");
    const allowed = await h.request("POST", "/messages/cancel", { body: { ids: ["x"] }, headers: { "X-Spool-Audit-Actor": "oncall-kim" } });
    assert.is(allowed.status, 200);
  });

  policy.run();

  const filters = suite<{ h: Harness }>(`admin filter mutations (${backend})`);
  filters.before.each(async (context) => {
    const config = buildConfig([
      pullRoute("/orders"),
      pullRoute("/untouched"),
      pullRoute("/billing", { application: "shop", endpointName: "billing" }),
    ]);
    const h = (context.h = await startHarness({ config, backend }));
    const now = h.clock.now();
    await h.seed([
      ...[1, 2, 3, 4, 5].map((n) => message(`o${n}`, "/orders", { receivedAtMs: now - (10 - n) * MINUTE })),
      message("u1", "/untouched"),
      message("b1", "/billing"),
      message("b2", "/billing"),
    ]);
  });
  filters.after.each(async ({ h }) => h.close());

  filters("preview counts exactly and changes nothing; execute changes the same items", async ({ h }) => {
    const body = { route: "/orders", state: "queued", limit: 3, preview_only: true };
    const preview = await h.request("POST", "/messages/cancel_by_filter", { body });
    assert.is(preview.status, 200);
    assert.equal(preview.body, { matched: 3, changed: 0, preview_only: true, audit: { reason: "test" } });
    assert.equal(await states(h, ["o1", "o2", "o3", "o4", "o5"]), { o1: "queued", o2: "queued", o3: "queued", o4: "queued", o5: "queued" });
    const execute = await h.request("POST", "/messages/cancel_by_filter", { body: { ...body, preview_only: false } });
    assert.equal(execute.body, { matched: 3, changed: 3, preview_only: false, audit: { reason: "test" } });
    assert.equal(await states(h, ["o1", "o2", "o3", "o4", "o5", "u1", "b1"]), {
      o1: "canceled", o2: "canceled", o3: "canceled", o4: "queued", o5: "queued", u1: "queued", b1: "queued",
    });
    assert.equal(h.audits.map((a) => a.metadata), [
      { kind: "filter_mutation", operation: "cancel_by_filter", matched: 3, changed: 0, preview_only: true },
      { kind: "filter_mutation", operation: "cancel_by_filter", matched: 3, changed: 3, preview_only: false },
    ]);
    assert.is(h.audits[0].tool, "messages_cancel_by_filter");
  });

  filters("before narrows the filter; requeue and resume by filter follow their state rules", async ({ h }) => {
    const before = new Date(h.clock.now() - 6 * MINUTE).toISOString(); // o1..o3
    const cancel = await h.request("POST", "/messages/cancel_by_filter", { body: { route: "/orders", before } });
    assert.equal([cancel.body.matched, cancel.body.changed], [3, 3]);
    const resume = await h.request("POST", "/messages/resume_by_filter", { body: { route: "/orders", limit: 1 } });
    assert.equal([resume.body.matched, resume.body.changed], [1, 1]);
    const requeue = await h.request("POST", "/messages/requeue_by_filter", { body: { route: "/orders", state: "canceled" } });
    assert.equal([requeue.body.matched, requeue.body.changed], [2, 2]);
    assert.equal(await states(h, ["o1", "o2", "o3"]), { o1: "queued", o2: "queued", o3: "queued" });
  });

  filters("managed-selector rules: labelled route, unscoped filters and unknown endpoints are refused and change nothing", async ({ h }) => {
    const cases: [unknown, number, string][] = [
      [{ route: "/billing" }, 400, "managed_selector_required"],
      [{ preview_only: true }, 400, "managed_selector_required"],
      [{ state: "queued" }, 400, "managed_selector_required"],
      [{ target: "pull" }, 400, "managed_selector_required"],
      [{ application: "shop", endpoint_name: "nope" }, 404, "managed_endpoint_not_found"],
      [{ route: "/orders", application: "shop", endpoint_name: "billing" }, 400, "invalid_body"],
      [{ application: "shop" }, 400, "invalid_body"],
      [{ route: "orders" }, 400, "invalid_body"],
      [{ route: "/orders", state: "canceled" }, 400, "invalid_body"],
      [{ route: "/orders", limit: 0 }, 400, "invalid_body"],
      [{ route: "/orders", limit: 1001 }, 400, "invalid_body"],
      [{ route: "/orders", before: "now" }, 400, "invalid_body"],
      [{ route: "/orders", color: "red" }, 400, "invalid_body"],
    ];
    for (const [body, status, code] of cases) {
      const reply = await h.request("POST", "/messages/cancel_by_filter", { body });
      assert.is(reply.status, status, JSON.stringify(body));
      assert.is(reply.body.code, code, JSON.stringify(body));
    }
    const all = await h.store.listMessages({ limit: 100 });
    assert.ok(all.every((m) => m.state === "queued"), "no refused filter changed anything");
    assert.is(h.audits.length, cases.length);
    assert.ok(h.audits.every((a, i) => a.result === cases[i][2]));
  });

  filters("a managed selector in a global filter touches only that endpoint's route", async ({ h }) => {
    const reply = await h.request("POST", "/messages/cancel_by_filter", { body: { application: "shop", endpoint_name: "billing" } });
    assert.equal([reply.body.matched, reply.body.changed], [2, 2]);
    assert.equal(reply.body.scope, { application: "shop", endpoint_name: "billing", route: "/billing" });
    assert.equal(await states(h, ["b1", "b2", "o1", "u1"]), { b1: "canceled", b2: "canceled", o1: "queued", u1: "queued" });
  });

  filters("endpoint-scoped filters use the path and refuse selector fields in the body with selector_scope_forbidden", async ({ h }) => {
    const preview = await h.request("POST", "/applications/shop/endpoints/billing/messages/cancel_by_filter", { body: { preview_only: true } });
    assert.equal([preview.body.matched, preview.body.changed, preview.body.preview_only], [2, 0, true]);
    for (const body of [{ route: "/orders" }, { application: "shop" }, { endpoint_name: "billing" }]) {
      const refused = await h.request("POST", "/applications/shop/endpoints/billing/messages/cancel_by_filter", { body });
      assert.is(refused.status, 400);
      assert.is(refused.body.code, "selector_scope_forbidden");
    }
    const missing = await h.request("POST", "/applications/shop/endpoints/nope/messages/requeue_by_filter", { body: {} });
    assert.is(missing.status, 404);
    assert.is(missing.body.code, "managed_endpoint_not_found");
    const run = await h.request("POST", "/applications/shop/endpoints/billing/messages/cancel_by_filter", { body: { limit: 1 } });
    assert.equal([run.body.matched, run.body.changed], [1, 1]);
    const resumed = await h.request("POST", "/applications/shop/endpoints/billing/messages/resume_by_filter", { body: { state: "canceled" } });
    assert.equal([resumed.body.matched, resumed.body.changed], [1, 1]);
    assert.equal(await states(h, ["b1", "b2", "o1"]), { b1: "queued", b2: "queued", o1: "queued" });
  });

  filters("an unscoped filter is allowed when no route is labelled", async ({ h }) => {
    h.config = buildConfig([pullRoute("/orders"), pullRoute("/untouched"), pullRoute("/billing")]);
    const reply = await h.request("POST", "/messages/cancel_by_filter", { body: { preview_only: true, limit: 1000 } });
    assert.is(reply.status, 200);
    assert.is(reply.body.matched, 8);
  });

  filters.run();
}
