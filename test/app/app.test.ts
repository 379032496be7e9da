// createApp in-process with hand-built IR: real listeners on 127.0.0.1:0, real SQLite files.
import { createServer, request as httpRequest } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { SpoolConfig } from "../../compiler/ir.js";
import { createApp, type SpoolApp } from "../../runtime/app/app.js";
import { openStore } from "../../runtime/store/open.js";
import { StoreError, type Store } from "../../runtime/store/store.js";
import { systemClock, TestClock } from "../../runtime/time/clock.js";
import { spoolExtensions } from "../../runtime/app/extensions.js";
import { createRuntimeLogger } from "../../runtime/observability/log.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { buildConfig, pullRoute, raw, route } from "./helpers/ir.js";
import { bearer, call, pullCall } from "./helpers/http.js";

const temp = makeTempDir("app");
let counter = 0;

interface Running {
  app: SpoolApp;
  ingress: string;
  pull: string;
  admin: string;
  /** Empty unless the config enables metrics. */
  metrics: string;
}

async function run(config: SpoolConfig, extra: Partial<Parameters<typeof createApp>[1]> = {}): Promise<Running> {
  const app = createApp(config, { version: "0.1.0", storeLocation: { sqlitePath: join(temp.path, `db-${++counter}.sqlite`) }, ...extra });
  const { addresses } = await app.start();
  const url = (name: string) => {
    const found = addresses.find((a) => a.name.split("+").includes(name))!;
    return `http://127.0.0.1:${found.port}`;
  };
  const metrics = addresses.find((a) => a.name === "metrics");
  return { app, ingress: url("ingress"), pull: url("pull"), admin: url("admin"), metrics: metrics ? `http://127.0.0.1:${metrics.port}` : "" };
}

const basic = () =>
  buildConfig({
    routes: [
      pullRoute("/hooks/a", "/a"),
      route("/hooks/fan", { kind: "deliver", targets: [httpTarget("https://one.example/in"), httpTarget("https://two.example/in")], concurrency: 20 }),
      pullRoute("/hooks/scoped", "/scoped", {}, [raw("scoped-token")]),
      pullRoute("/hooks/get", "/get", { match: { methods: ["PUT"], hosts: [], headers: [], headersExist: [], query: [], queryExist: [], remoteIps: [] } }),
    ],
    adminTokens: ["admin-token"],
  });

function httpTarget(url: string) {
  return { kind: "http" as const, target: url, url, timeoutMs: 10_000, retry: { maxRetries: 8, baseMs: 2_000, capMs: 120_000, jitter: 0.2 }, headers: [], sign: null };
}

/** An openStore whose store passes every method call through `intercept` (by method name), which may answer instead. */
function interceptedStore(intercept: (name: string, call: () => unknown) => unknown) {
  return async (...open: Parameters<typeof openStore>): Promise<Store> => {
    const store = await openStore(...open);
    return new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => intercept(String(name), () => value.apply(target, args));
      },
    }) as Store;
  };
}

const test = suite("app in-process");

test.after(() => temp.cleanup());

test("a webhook is dequeued with its payload and headers, then acked and gone", async () => {
  const s = await run(basic());
  try {
    const posted = await call(`${s.ingress}/hooks/a`, {
      headers: { "content-type": "application/json", authorization: "Bearer secret", cookie: "c=1", "x-custom": "yes" },
      body: '{"hello":1}',
    });
    assert.is(posted.status, 202);
    assert.is(posted.json.status, "queued");
    assert.is(posted.json.ids.length, 1);
    assert.is(posted.text, JSON.stringify({ status: "queued", ids: posted.json.ids }));

    const got = await pullCall(`${s.pull}/a`, "dequeue", "pull-token", { batch: 5 });
    assert.is(got.status, 200);
    const [item] = got.json.items;
    assert.is(item.id, posted.json.ids[0]);
    assert.is(item.route, "/hooks/a");
    assert.is(item.target, "pull");
    assert.is(Buffer.from(item.payload_b64, "base64").toString(), '{"hello":1}');
    assert.is(item.headers["X-Custom"], "yes");
    assert.is(item.headers["Content-Type"], "application/json");
    assert.not.ok("Authorization" in item.headers, "Authorization is not stored");
    assert.not.ok("Cookie" in item.headers, "Cookie is not stored");
    assert.is(item.attempt, 1);
    assert.ok(Date.parse(item.lease_until) > Date.now());

    const acked = await pullCall(`${s.pull}/a`, "ack", "pull-token", { lease_id: item.lease_id });
    assert.is(acked.status, 204);
    const again = await pullCall(`${s.pull}/a`, "dequeue", "pull-token", {});
    assert.equal(again.json.items, []);
  } finally {
    await s.app.stop();
  }
});

test("ids the next webhooks would get, taken first by publish, do not refuse those webhooks", async () => {
  const admin = spoolExtensions({ configPath: join(temp.path, "unused.Spoolfile"), compileOptions: {} }).admin;
  const s = await run(basic(), { admin });
  try {
    const first = await call(`${s.ingress}/hooks/a`, { body: "one" });
    assert.is(first.status, 202);
    // Generated ids count up within a stream, so the next ones can be guessed and published first.
    const [id] = first.json.ids as string[];
    const next = (k: number) => id.slice(0, -8) + (parseInt(id.slice(-8), 16) + k).toString(16).padStart(8, "0");
    const taken = [next(1), next(2), next(3)];
    const published = await call(`${s.admin}/messages/publish`, {
      headers: { ...bearer("admin-token"), "X-Spool-Audit-Reason": "test" },
      body: JSON.stringify({ items: taken.map((takenId) => ({ id: takenId, route: "/hooks/a", payload_b64: "" })) }),
    });
    assert.is(published.status, 200, published.text);

    const second = await call(`${s.ingress}/hooks/a`, { body: "two" });
    assert.is(second.status, 202, second.text);
    const fanned = await call(`${s.ingress}/hooks/fan`, { body: "three" });
    assert.is(fanned.status, 202, fanned.text);
    const ids = [...second.json.ids, ...fanned.json.ids];
    assert.is(new Set([...ids, ...taken, id]).size, 7, "every stored message has its own id");
    const listed = await call(`${s.admin}/messages?limit=100`, { method: "GET", headers: bearer("admin-token") });
    const payloads = new Map((listed.json.items as { id: string }[]).map((m) => [m.id, m]));
    for (const storedId of [id, ...ids, ...taken]) assert.ok(payloads.has(storedId), `${storedId} is stored`);
  } finally {
    await s.app.stop();
  }
});

test("fan-out stores one copy per deliver target, ids in target order", async () => {
  const s = await run(basic());
  try {
    const posted = await call(`${s.ingress}/hooks/fan`, { body: "x" });
    assert.is(posted.status, 202);
    assert.is(posted.json.ids.length, 2);
    // The 202 body is written by hand (runtime/ingress/handler.ts): it must stay exactly what JSON.stringify gives.
    assert.is(posted.text, JSON.stringify({ status: "queued", ids: posted.json.ids }));
    assert.is(posted.headers.get("content-length"), String(posted.text.length));
    const views = await s.app.context.store.getMessages(posted.json.ids);
    const byId = new Map(views.map((v) => [v.id, v.target]));
    assert.is(byId.get(posted.json.ids[0]), "https://one.example/in");
    assert.is(byId.get(posted.json.ids[1]), "https://two.example/in");
  } finally {
    await s.app.stop();
  }
});

test("unknown path is 404, wrong method 405 with Allow, segment-bounded matching", async () => {
  const s = await run(basic());
  try {
    const missing = await call(`${s.ingress}/nowhere`, { body: "x" });
    assert.is(missing.status, 404);
    assert.is(missing.json.code, "not_found");
    const suffix = await call(`${s.ingress}/hooks/a-suffix`, { body: "x" });
    assert.is(suffix.status, 404);
    const sub = await call(`${s.ingress}/hooks/a/deeper`, { body: "x" });
    assert.is(sub.status, 202);
    const wrong = await call(`${s.ingress}/hooks/a`, { method: "GET" });
    assert.is(wrong.status, 405);
    assert.is(wrong.headers.get("allow"), "POST");
    assert.is(wrong.json.code, "method_not_allowed");
    const put = await call(`${s.ingress}/hooks/get`, { method: "PUT", body: "x" });
    assert.is(put.status, 202);
    const postToPutRoute = await call(`${s.ingress}/hooks/get`, { method: "POST", body: "x" });
    assert.is(postToPutRoute.status, 405);
    assert.is(postToPutRoute.headers.get("allow"), "PUT");
  } finally {
    await s.app.stop();
  }
});

test("Pull API: 401 without or with an unknown token, 403 outside the route's list, 404 route and op, 405 method", async () => {
  const s = await run(basic());
  try {
    assert.is((await call(`${s.pull}/a/dequeue`, { body: "{}" })).status, 401);
    assert.is((await pullCall(`${s.pull}/a`, "dequeue", "nope")).json.code, "unauthorized");
    const forbidden = await pullCall(`${s.pull}/scoped`, "dequeue", "pull-token");
    assert.is(forbidden.status, 403);
    assert.is(forbidden.json.code, "forbidden");
    const scopedOk = await pullCall(`${s.pull}/scoped`, "dequeue", "scoped-token");
    assert.is(scopedOk.status, 200);
    assert.is((await pullCall(`${s.pull}/a`, "dequeue", "scoped-token")).status, 403);
    assert.is((await pullCall(`${s.pull}/zzz`, "dequeue", "pull-token")).status, 404);
    assert.is((await pullCall(`${s.pull}/a`, "explode", "pull-token")).status, 404);
    const get = await call(`${s.pull}/a/dequeue`, { method: "GET", headers: bearer("pull-token") });
    assert.is(get.status, 405);
    assert.is(get.headers.get("allow"), "POST");
  } finally {
    await s.app.stop();
  }
});

test("Pull API bodies are strict: unknown fields, trailing JSON, bad durations and both lease forms are 400", async () => {
  const s = await run(basic());
  try {
    for (const body of ['{"batch":1,"extra":true}', '{"batch":1}{"batch":2}', '{"lease_ttl":"soon"}', "[1]", '{"batch":"1"}']) {
      const reply = await pullCall(`${s.pull}/a`, "dequeue", "pull-token", body);
      assert.is(reply.status, 400, body);
      assert.is(reply.json.code, "invalid_body");
    }
    const both = await pullCall(`${s.pull}/a`, "ack", "pull-token", { lease_id: "x", lease_ids: ["y"] });
    assert.is(both.status, 400);
    const tooMany = await pullCall(`${s.pull}/a`, "nack", "pull-token", { lease_ids: Array.from({ length: 101 }, (_, i) => `l${i}`) });
    assert.is(tooMany.status, 400);
    const hundred = await pullCall(`${s.pull}/a`, "ack", "pull-token", { lease_ids: Array.from({ length: 100 }, (_, i) => `l${i}`) });
    assert.is(hundred.status, 409, "100 unknown leases are conflicts, not a 400");
    assert.is(hundred.json.conflicts.length, 100);
  } finally {
    await s.app.stop();
  }
});

test("batch ack reports conflicts with the acked count; nack dead (counted by reason in health details) and extend work per lease", async () => {
  const s = await run(basic());
  try {
    for (let i = 0; i < 3; i++) assert.is((await call(`${s.ingress}/hooks/a`, { body: `m${i}` })).status, 202);
    const { items } = (await pullCall(`${s.pull}/a`, "dequeue", "pull-token", { batch: 3 })).json;
    assert.is(items.length, 3);
    const mixed = await pullCall(`${s.pull}/a`, "ack", "pull-token", { lease_ids: [items[0].lease_id, "lease_unknown", items[0].lease_id] });
    assert.is(mixed.status, 409);
    assert.is(mixed.json.code, "lease_conflict");
    assert.is(mixed.json.acked, 1);
    assert.equal(mixed.json.conflicts, [{ lease_id: "lease_unknown", reason: "lease_not_found" }]);
    const repeat = await pullCall(`${s.pull}/a`, "ack", "pull-token", { lease_ids: [items[0].lease_id] });
    assert.is(repeat.status, 200, "a repeated ack is idempotent success");
    assert.equal(repeat.json, { acked: 1 });

    const extended = await pullCall(`${s.pull}/a`, "extend", "pull-token", { lease_id: items[1].lease_id, lease_ttl: "2m" });
    assert.is(extended.status, 204);
    const unknownExtend = await pullCall(`${s.pull}/a`, "extend", "pull-token", { lease_id: "lease_nope" });
    assert.is(unknownExtend.status, 409);

    const dead = await pullCall(`${s.pull}/a`, "nack", "pull-token", { lease_ids: [items[1].lease_id, items[2].lease_id], dead: true, reason: "bad payload" });
    assert.is(dead.status, 200);
    assert.equal(dead.json, { succeeded: 2 });
    const repeatedDead = await pullCall(`${s.pull}/a`, "nack", "pull-token", { lease_ids: [items[1].lease_id, items[2].lease_id], dead: true, reason: "bad payload" });
    assert.equal([repeatedDead.status, repeatedDead.json], [200, { succeeded: 2 }], "a repeated nack is idempotent success (and is not counted again below)");
    const [view] = await s.app.context.store.getMessages([items[1].id]);
    assert.is(view.state, "dead");
    assert.is(view.deadReason, "bad payload");
    const details = await call(`${s.admin}/healthz?details=1`, { method: "GET", headers: bearer("admin-token") });
    assert.equal(details.json.diagnostics.delivery.dead_by_reason, { max_retries: 0, no_retry: 0, policy_denied: 0, unspecified: 0, other: 2 }, "a worker's dead letters count by reason");
    assert.is(details.json.diagnostics.delivery.dead_total, 2);
  } finally {
    await s.app.stop();
  }
});

test("durations past 36500d are 400 invalid_body; the longest allowed delay keeps the message listable and not ready", async () => {
  const admin = spoolExtensions({ configPath: join(temp.path, "unused.Spoolfile"), compileOptions: {} }).admin;
  const s = await run(basic(), { admin });
  try {
    assert.is((await call(`${s.ingress}/hooks/a`, { body: "x" })).status, 202);
    const huge = '"2500000000h"';
    for (const [op, body] of [
      ["dequeue", `{"lease_ttl":${huge}}`],
      ["dequeue", '{"max_wait":"9007199254740991ms"}'],
      ["nack", `{"lease_id":"lease_x","delay":${huge}}`],
      ["extend", `{"lease_id":"lease_x","lease_ttl":${huge}}`],
    ]) {
      const reply = await pullCall(`${s.pull}/a`, op, "pull-token", body);
      assert.equal([reply.status, reply.json.code], [400, "invalid_body"], body);
      assert.match(reply.json.detail, /at most 36500d/);
    }
    // Nothing was leased by the refused dequeue: the message is still there to take.
    const [item] = (await pullCall(`${s.pull}/a`, "dequeue", "pull-token", { lease_ttl: "36500d" })).json.items;
    assert.ok(item, "the message is dequeued after the refusals");
    assert.is((await pullCall(`${s.pull}/a`, "nack", "pull-token", { lease_id: item.lease_id, delay: "36500d" })).status, 204);
    const listed = await call(`${s.admin}/messages?route=/hooks/a`, { method: "GET", headers: bearer("admin-token") });
    assert.is(listed.status, 200, listed.text);
    const [view] = listed.json.items;
    assert.is(view.state, "queued");
    assert.ok(Date.parse(view.next_run_at) > Date.now() + 36_000 * 86_400_000, view.next_run_at);
    assert.match(view.next_run_at, /^\d{4}-\d{2}-\d{2}T/, "RFC 3339 with a four-digit year");
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await pullCall(`${s.pull}/a`, "dequeue", "pull-token", {})).json.items, [], "a delay past setTimeout's range is not ready early");
  } finally {
    await s.app.stop();
  }
});

test("a lease of another pull route is lease_not_found on this route and stays leased", async () => {
  const s = await run(basic());
  try {
    await call(`${s.ingress}/hooks/scoped`, { body: "x" });
    const { items } = (await pullCall(`${s.pull}/scoped`, "dequeue", "scoped-token")).json;
    const crossed = await pullCall(`${s.pull}/a`, "ack", "pull-token", { lease_id: items[0].lease_id });
    assert.is(crossed.status, 409);
    assert.is(crossed.json.conflicts[0].reason, "lease_not_found");
    const [view] = await s.app.context.store.getMessages([items[0].id]);
    assert.is(view.state, "leased");
  } finally {
    await s.app.stop();
  }
});

test("long poll returns as soon as a message arrives", async () => {
  const s = await run(basic());
  try {
    const polling = pullCall(`${s.pull}/a`, "dequeue", "pull-token", { max_wait: "20s" });
    await new Promise((r) => setTimeout(r, 100));
    await call(`${s.ingress}/hooks/a`, { body: "wake" });
    const reply = await polling;
    assert.is(reply.json.items.length, 1);
  } finally {
    await s.app.stop();
  }
});

test("stop answers open long polls with empty items", async () => {
  const s = await run(basic());
  const polling = pullCall(`${s.pull}/a`, "dequeue", "pull-token", { max_wait: "25s" });
  await new Promise((r) => setTimeout(r, 100));
  const stopped = s.app.stop();
  const reply = await polling;
  assert.is(reply.status, 200);
  assert.equal(reply.json.items, []);
  await stopped;
});

test("bare /healthz needs no token; details and other admin paths do", async () => {
  const s = await run(basic());
  try {
    const bare = await call(`${s.admin}/healthz`, { method: "GET" });
    assert.is(bare.status, 200);
    assert.equal(bare.json, { ok: true });
    assert.is((await call(`${s.admin}/healthz?details=1`, { method: "GET" })).status, 401);
    assert.is((await call(`${s.admin}/messages`, { method: "GET" })).status, 401);
    assert.is((await call(`${s.admin}/messages`, { method: "GET", headers: bearer("admin-token") })).status, 404);
    await call(`${s.ingress}/hooks/a`, { body: "x" });
    const details = await call(`${s.admin}/healthz?details=1`, { method: "GET", headers: bearer("admin-token") });
    assert.is(details.status, 200);
    assert.is(details.json.ok, true);
    const queue = details.json.diagnostics.queue;
    assert.is(queue.total, queue.by_state.queued + queue.by_state.leased + queue.by_state.dead);
    assert.is(details.json.diagnostics.ingress.accepted_total, 1);
    assert.equal(details.json.diagnostics.tracing, { enabled: false, init_failures_total: 0, export_errors_total: 0, spans_dropped_total: 0 });
    assert.is(details.json.diagnostics.store, undefined, "store diagnostics only for the memory backend");
  } finally {
    await s.app.stop();
  }
});

test("an Admin API without a token answers only requests addressed to localhost from no other origin (DNS rebinding)", async () => {
  const s = await run(buildConfig({ routes: [pullRoute("/hooks/a", "/a")] }));
  const port = Number(new URL(s.admin).port);
  const get = (headers: Record<string, string>, path = "/healthz?details=1") =>
    new Promise<{ status: number; code?: string }>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port, path, method: "GET", headers }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, code: text ? (JSON.parse(text) as { code?: string }).code : undefined }));
      });
      req.on("error", reject);
      req.end();
    });
  try {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, "LOCALHOST", `[::1]:${port}`, "127.0.0.2"]) {
      assert.is((await get({ host })).status, 200, host);
    }
    assert.is((await get({ host: `127.0.0.1:${port}`, origin: `http://localhost:${port}` })).status, 200, "a loopback origin");
    for (const host of [`attacker.example:${port}`, "attacker.example", "127.0.0.1.nip.io", "[2001:db8::1]"]) {
      assert.equal(await get({ host }), { status: 403, code: "forbidden" }, host);
    }
    for (const origin of [`http://attacker.example:${port}`, "null"]) {
      assert.equal(await get({ host: `127.0.0.1:${port}`, origin }), { status: 403, code: "forbidden" }, origin);
    }
    // An absolute-form target names the host in place of Host (RFC 9112 §3.2.2).
    assert.equal(await get({ host: `127.0.0.1:${port}` }, "http://attacker.example/healthz?details=1"), { status: 403, code: "forbidden" }, "absolute form");
    assert.is((await get({ host: `127.0.0.1:${port}` }, `http://localhost:${port}/healthz?details=1`)).status, 200, "absolute form, loopback");
    const bare = await call(`${s.admin}/healthz`, { method: "GET" });
    assert.is(bare.status, 200, "the bare probe stays open");
  } finally {
    await s.app.stop();
  }
});

test("admin routes seam: handled paths answer, unhandled are 404, all behind the token", async () => {
  const seen: string[] = [];
  const s = await run(basic(), {
    admin: () => async (_req, res, path) => {
      seen.push(path);
      if (path !== "/dlq") return false;
      res.statusCode = 200;
      res.end("{}");
      return true;
    },
  });
  try {
    assert.is((await call(`${s.admin}/dlq`, { method: "GET", headers: bearer("admin-token") })).status, 200);
    assert.is((await call(`${s.admin}/other`, { method: "GET", headers: bearer("admin-token") })).status, 404);
    assert.is((await call(`${s.admin}/dlq`, { method: "GET" })).status, 401);
    assert.equal(seen, ["/dlq", "/other"]);
  } finally {
    await s.app.stop();
  }
});

test("shared listener: ingress, pull and admin on one address by prefix", async () => {
  const s = await run(buildConfig({ routes: [pullRoute("/hooks/a", "/a")], shared: true }));
  try {
    assert.is(s.ingress, s.pull);
    assert.is((await call(`${s.ingress}/hooks/a`, { body: "x" })).status, 202);
    assert.is((await pullCall(`${s.ingress}/pull/a`, "dequeue", "pull-token")).json.items.length, 1);
    assert.equal((await call(`${s.ingress}/admin/healthz`, { method: "GET" })).json, { ok: true });
    assert.is((await call(`${s.ingress}/pullx`, { body: "x" })).status, 404, "prefix match is segment-bounded");
  } finally {
    await s.app.stop();
  }
});

test("alone on its address, a prefixed Pull or Admin API serves nothing outside its prefix", async () => {
  const config = buildConfig({
    routes: [pullRoute("/hooks/a", "/a")],
    patch: (c) => {
      c.pullApi = { ...c.pullApi, prefix: "/pull" };
      c.adminApi = { ...c.adminApi, prefix: "/admin" };
    },
  });
  const s = await run(config);
  try {
    assert.is(s.pull === s.ingress, false, "the Pull API has a listener of its own");
    assert.is((await call(`${s.ingress}/hooks/a`, { body: "x" })).status, 202);
    const outside = await pullCall(`${s.pull}/a`, "dequeue", "pull-token");
    assert.is(outside.status, 404, "a route's pull path without the prefix is not served");
    assert.is(outside.json.code, "not_found");
    const inside = await pullCall(`${s.pull}/pull/a`, "dequeue", "pull-token");
    assert.is(inside.json.items.length, 1, "the message was not leased by the refused call");
    assert.is((await call(`${s.admin}/healthz`, { method: "GET" })).status, 404);
    assert.equal((await call(`${s.admin}/admin/healthz`, { method: "GET" })).json, { ok: true });
  } finally {
    await s.app.stop();
  }
});

test("headers copied by forward auth count against max_headers: over the limit is 413 and nothing is stored", async () => {
  const authServer = createServer((req, res) => {
    res.writeHead(200, { "X-User": "u".repeat(Number(req.headers["x-want"] ?? 1)) });
    res.end();
  });
  await new Promise<void>((resolve) => authServer.listen(0, "127.0.0.1", resolve));
  const authUrl = `http://127.0.0.1:${(authServer.address() as AddressInfo).port}/check`;
  const forward = { kind: "forward" as const, url: authUrl, timeoutMs: 2_000, copyHeaders: ["X-User"], bodyLimitBytes: 1024 };
  const s = await run(buildConfig({ routes: [pullRoute("/hooks/fwd", "/fwd", { auth: forward, maxHeadersBytes: 400 })] }));
  try {
    const small = await call(`${s.ingress}/hooks/fwd`, { headers: { "x-want": "10" }, body: "x" });
    assert.is(small.status, 202, "request and copies under the limit");
    const over = await call(`${s.ingress}/hooks/fwd`, { headers: { "x-want": "300" }, body: "y" });
    assert.equal([over.status, over.json.code], [413, "headers_too_large"]);
    const items = (await pullCall(`${s.pull}/fwd`, "dequeue", "pull-token", { batch: 10 })).json.items;
    assert.equal(items.map((i: { payload_b64: string }) => Buffer.from(i.payload_b64, "base64").toString()), ["x"], "only the accepted message was stored");
    assert.is(items[0].headers["X-User"], "u".repeat(10), "the copy was stored");
  } finally {
    await s.app.stop();
    await new Promise((resolve) => authServer.close(resolve));
  }
});

test("a copy_headers header is stored only as forward auth answered it: a sender's own copy never is", async () => {
  const authServer = createServer((req, res) => {
    // An anonymous caller is allowed without an identity; a known one gets theirs.
    res.writeHead(200, req.headers.authorization === "Bearer good" ? { "X-User-Id": "alice" } : {});
    res.end();
  });
  await new Promise<void>((resolve) => authServer.listen(0, "127.0.0.1", resolve));
  const authUrl = `http://127.0.0.1:${(authServer.address() as AddressInfo).port}/check`;
  const forward = { kind: "forward" as const, url: authUrl, timeoutMs: 2_000, copyHeaders: ["X-User-Id"], bodyLimitBytes: 1024 };
  const s = await run(buildConfig({ routes: [pullRoute("/hooks/fwd", "/fwd", { auth: forward })] }));
  try {
    assert.is((await call(`${s.ingress}/hooks/fwd`, { headers: { authorization: "Bearer anon", "x-user-id": "admin" }, body: "anon" })).status, 202);
    assert.is((await call(`${s.ingress}/hooks/fwd`, { headers: { authorization: "Bearer good", "X-USER-ID": "admin" }, body: "good" })).status, 202);
    const items = (await pullCall(`${s.pull}/fwd`, "dequeue", "pull-token", { batch: 10 })).json.items as { payload_b64: string; headers: Record<string, string> }[];
    const byBody = Object.fromEntries(items.map((i) => [Buffer.from(i.payload_b64, "base64").toString(), i.headers["X-User-Id"]]));
    assert.equal(byBody, { anon: undefined, good: "alice" });
  } finally {
    await s.app.stop();
    await new Promise((resolve) => authServer.close(resolve));
  }
});

test("an unreachable forward-auth service is 503 and said in the runtime log, once per route in a burst", async () => {
  const down = await new Promise<number>((resolve) => {
    const probe = createServer();
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(port));
    });
  });
  let logged = "";
  const logger = createRuntimeLogger({ level: "info", output: { kind: "stderr" }, clock: systemClock, sink: { write: (line) => void (logged += line), close: async () => undefined } });
  const forward = { kind: "forward" as const, url: `http://127.0.0.1:${down}/check`, timeoutMs: 2_000, copyHeaders: [], bodyLimitBytes: 1024 };
  const s = await run(buildConfig({ routes: [pullRoute("/hooks/fwd", "/fwd", { auth: forward })] }), { logger });
  try {
    for (let i = 0; i < 3; i++) {
      const refused = await call(`${s.ingress}/hooks/fwd`, { body: "x" });
      assert.equal([refused.status, refused.json.code], [503, "auth_unavailable"]);
    }
    const lines = logged.trim().split("\n").map((line) => JSON.parse(line)).filter((l) => l.msg === "ingress_auth_forward_unavailable");
    assert.is(lines.length, 1, logged);
    assert.equal([lines[0].level, lines[0].route], ["warn", "/hooks/fwd"]);
    assert.match(lines[0].detail, /ECONNREFUSED|connect/i);
  } finally {
    await s.app.stop();
  }
});

test("refusals answered by the HTTP parser on the ingress listener are counted as ingress refusals", async () => {
  const config = buildConfig({
    routes: [pullRoute("/hooks/a", "/a")],
    patch: (c) => {
      c.observability = { ...c.observability, metrics: { ...c.observability.metrics, enabled: true } };
    },
  });
  const s = await run(config);
  const rawRequest = async (base: string, text: string) => {
    const socket = connect(Number(new URL(base).port), "127.0.0.1");
    socket.write(text);
    let reply = "";
    for await (const chunk of socket) reply += chunk;
    return reply;
  };
  const rejected = async (reason: string, status: number) => {
    const text = await (await fetch(`${s.metrics}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(`spool_ingress_rejected_by_reason_total{reason="${reason}",status="${status}"}`));
    return line === undefined ? 0 : Number(line.split(" ").pop());
  };
  try {
    const tooLarge = await rawRequest(s.ingress, `POST /hooks/a HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(200_000)}\r\nContent-Length: 1\r\n\r\nx`);
    assert.match(tooLarge, /^HTTP\/1\.1 413/);
    const malformed = await rawRequest(s.ingress, "POST /hooks/a HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n");
    assert.match(malformed, /^HTTP\/1\.1 400/);
    assert.is(await rejected("headers_too_large", 413), 1);
    assert.is(await rejected("bad_request", 400), 1);
    await rawRequest(s.pull, "POST /a/dequeue HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n");
    assert.is(await rejected("bad_request", 400), 1, "a listener without ingress does not count as ingress");
    // A client that hangs up while its refused body is being drained cuts that body short: that is
    // no second request and no second refusal.
    const hungUp = await new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(s.ingress).port), "127.0.0.1", () => {
        socket.write("POST /hooks/a HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\nabc");
      });
      let reply = "";
      socket.on("error", () => {});
      socket.on("data", (chunk) => {
        reply += chunk;
        if (reply.includes("payload_too_large")) {
          socket.end();
          resolve(reply);
        }
      });
    });
    assert.match(hungUp, /^HTTP\/1\.1 413/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.is(await rejected("payload_too_large", 413), 1);
    assert.is(await rejected("bad_request", 400), 1, "the reset is not counted as a malformed request");
  } finally {
    await s.app.stop();
  }
});

test("Expect: 100-continue: 100 only once the body is wanted; a declared body over max_body or an unknown route gets its final answer without one", async () => {
  const s = await run(
    buildConfig({
      routes: [pullRoute("/hooks/a", "/a", { maxBodyBytes: 1024 }), pullRoute("/hooks/tok", "/tok", { auth: { kind: "token", tokens: [raw("tok")] } })],
    }),
  );
  /** Sends the head only and returns the first bytes answered; `body` is sent once they arrive. */
  const firstAnswer = (head: string, body?: string) =>
    new Promise<{ first: string; rest: Promise<string> }>((resolve) => {
      const socket = connect(Number(new URL(s.ingress).port), "127.0.0.1", () => socket.write(head));
      let all = "";
      let answered = false;
      socket.on("error", () => {});
      const rest = new Promise<string>((done) => socket.on("close", () => done(all)));
      socket.on("data", (chunk) => {
        all += chunk;
        if (answered) return;
        answered = true;
        if (body !== undefined) socket.end(body);
        resolve({ first: all, rest });
      });
    });
  try {
    const tooLarge = await firstAnswer("POST /hooks/a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 10000000\r\n\r\n");
    assert.match(tooLarge.first, /^HTTP\/1\.1 413 /, "no 100 before the 413");
    const unknown = await firstAnswer("POST /nowhere HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    assert.match(unknown.first, /^HTTP\/1\.1 404 /, "no 100 before the 404");
    // A token route checks the token before it wants the body: no 100 before the 401.
    const unauthenticated = await firstAnswer("POST /hooks/tok HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    assert.match(unauthenticated.first, /^HTTP\/1\.1 401 [^]*WWW-Authenticate: Bearer/, "no 100 before the 401");
    assert.match(await unauthenticated.rest, /Connection: close/);
    const fits = await firstAnswer("POST /hooks/a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\n", "hello");
    assert.match(fits.first, /^HTTP\/1\.1 100 Continue\r\n\r\n/);
    assert.match(await fits.rest, /HTTP\/1\.1 202 [^]*"status":"queued"/);
    const { items } = (await pullCall(`${s.pull}/a`, "dequeue", "pull-token", { batch: 10 })).json;
    assert.equal(items.map((i: { payload_b64: string }) => Buffer.from(i.payload_b64, "base64").toString()), ["hello"]);
  } finally {
    await s.app.stop();
  }
});

test("a reload that raises max_headers lifts the HTTP parser's header limit too", async () => {
  const withLimit = (bytes: number) =>
    buildConfig({
      routes: [pullRoute("/hooks/a", "/a", { maxHeadersBytes: bytes })],
      patch: (c) => {
        c.defaults = { ...c.defaults, maxHeadersBytes: bytes };
      },
    });
  const s = await run(withLimit(4 * 1024));
  const big = { "x-big": "b".repeat(20_000) };
  try {
    const before = await call(`${s.ingress}/hooks/a`, { headers: big, body: "x" });
    assert.equal([before.status, before.json.code], [413, "headers_too_large"]);
    assert.equal(s.app.reload(withLimit(64 * 1024), null), { applied: true, generation: 2 });
    assert.is((await call(`${s.ingress}/hooks/a`, { headers: big, body: "x" })).status, 202, "the raised limit applies to the next connection");
  } finally {
    await s.app.stop();
  }
});

test("every header line is stored and counted: 1,100 headers are kept, 2,000 over max_headers are 413", async () => {
  const withLimit = buildConfig({
    routes: [pullRoute("/hooks/a", "/a", { maxHeadersBytes: 64 * 1024 })],
    patch: (c) => {
      c.defaults = { ...c.defaults, maxHeadersBytes: 64 * 1024 };
    },
  });
  const s = await run(withLimit);
  const many = (count: number, value: string) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`x-h${String(i).padStart(4, "0")}`, value]));
  try {
    const kept = await call(`${s.ingress}/hooks/a`, { headers: many(1_100, "v"), body: "x" });
    assert.is(kept.status, 202);
    const [item] = (await pullCall(`${s.pull}/a`, "dequeue", "pull-token")).json.items;
    assert.is(Object.keys(item.headers).filter((name) => name.startsWith("X-H") || name.startsWith("x-h")).length, 1_100, "no header line dropped");
    // About 90 KB of header lines against max_headers 64 KB (under the parser's limit).
    const over = await call(`${s.ingress}/hooks/a`, { headers: many(2_000, "v".repeat(36)), body: "x" });
    assert.equal([over.status, over.json?.code], [413, "headers_too_large"]);
    assert.equal((await pullCall(`${s.pull}/a`, "dequeue", "pull-token")).json.items, [], "nothing stored");
  } finally {
    await s.app.stop();
  }
});

test("a webhook whose body is still arriving at the stop deadline gets 503 shutting_down and is not stored", async () => {
  const dbPath = join(temp.path, `db-${counter + 1}.sqlite`);
  const s = await run(basic());
  const socket = connect(Number(new URL(s.ingress).port), "127.0.0.1");
  let reply = "";
  socket.on("data", (chunk) => (reply += chunk));
  socket.on("error", () => undefined);
  const closed = new Promise((resolve) => socket.on("close", resolve));
  socket.write("POST /hooks/a HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345");
  await new Promise((resolve) => setTimeout(resolve, 100));
  await s.app.stop(300);
  await closed;
  assert.match(reply, /^HTTP\/1\.1 503 /);
  assert.is(JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4)).code, "shutting_down");
  const store = await openStore({ backend: "sqlite", sqlitePath: dbPath }, { clock: systemClock });
  try {
    assert.equal(await store.listMessages({ limit: 10 }), [], "nothing stored");
  } finally {
    await store.close();
  }
});

test("memory backend health details include store diagnostics", async () => {
  const s = await run(buildConfig({ routes: [pullRoute("/hooks/a", "/a")], backend: "memory" }));
  try {
    await call(`${s.ingress}/hooks/a`, { body: "x" });
    const details = await call(`${s.admin}/healthz?details=1`, { method: "GET" });
    assert.is(details.json.diagnostics.store.backend, "memory");
    assert.is(details.json.diagnostics.store.memory_pressure.active, false);
  } finally {
    await s.app.stop();
  }
});

test("reload swaps routes atomically and keeps a drained rate-limit bucket drained", async () => {
  const limited = { rateLimit: { rps: 0.01, burst: 1 } };
  const first = buildConfig({ routes: [pullRoute("/hooks/a", "/a", limited)] });
  const s = await run(first);
  try {
    assert.is((await call(`${s.ingress}/hooks/a`, { body: "1" })).status, 202);
    const limitedReply = await call(`${s.ingress}/hooks/a`, { body: "2" });
    assert.is(limitedReply.status, 429);
    assert.ok(Number(limitedReply.headers.get("retry-after")) >= 1);
    const second = buildConfig({ routes: [pullRoute("/hooks/a", "/a", limited), pullRoute("/hooks/b", "/b")] });
    assert.equal(s.app.reload(second, null), { applied: true, generation: 2 });
    assert.is((await call(`${s.ingress}/hooks/b`, { body: "x" })).status, 202, "new route serves");
    assert.is((await call(`${s.ingress}/hooks/a`, { body: "3" })).status, 429, "bucket survived the reload");
  } finally {
    await s.app.stop();
  }
});

test("a route's own rate limit replaces the global ingress one: neither bucket spends the other's tokens", async () => {
  const config = buildConfig({
    routes: [pullRoute("/hooks/own", "/own", { rateLimit: { rps: 0.01, burst: 3 } }), pullRoute("/hooks/shared", "/shared")],
    ingressRateLimit: { rps: 0.01, burst: 1 },
  });
  const s = await run(config);
  try {
    for (const body of ["1", "2", "3"]) assert.is((await call(`${s.ingress}/hooks/own`, { body })).status, 202, `own bucket, request ${body}`);
    const ownLimited = await call(`${s.ingress}/hooks/own`, { body: "4" });
    assert.equal([ownLimited.status, ownLimited.json.detail], [429, "route rate limit exceeded"]);
    // The global bucket was not touched by the route with its own limit.
    assert.is((await call(`${s.ingress}/hooks/shared`, { body: "1" })).status, 202);
    const sharedLimited = await call(`${s.ingress}/hooks/shared`, { body: "2" });
    assert.equal([sharedLimited.status, sharedLimited.json.detail], [429, "ingress rate limit exceeded"]);
  } finally {
    await s.app.stop();
  }
});

test("health details serve trend signals from the short-lived cache: a burst of probes makes one backlog query", async () => {
  const clock = new TestClock();
  const calls = new Map<string, number>();
  const extensions = spoolExtensions({ configPath: join(temp.path, "unused.Spoolfile"), compileOptions: {} });
  const s = await run(basic(), {
    clock,
    admin: extensions.admin,
    trendSignals: extensions.trendSignals,
    openStore: interceptedStore((name, call) => {
      calls.set(name, (calls.get(name) ?? 0) + 1);
      return call();
    }),
  });
  try {
    const details = () => call(`${s.admin}/healthz?details=1`, { method: "GET", headers: bearer("admin-token") });
    const before = calls.get("trends") ?? 0;
    const replies = await Promise.all(Array.from({ length: 20 }, details));
    assert.ok(replies.every((r) => r.status === 200 && Array.isArray(r.json.diagnostics.queue.trend_signals.signals)));
    assert.is((calls.get("trends") ?? 0) - before, 1, "one backlog query for twenty probes");
    await details();
    assert.is((calls.get("trends") ?? 0) - before, 1, "still fresh");
    clock.advance(1_100);
    await details();
    await new Promise((resolve) => setImmediate(resolve));
    assert.is((calls.get("trends") ?? 0) - before, 2, "past the refresh age: served stale, refreshed once");
  } finally {
    await s.app.stop();
  }
});

test("reload that changes a listener is refused whole", async () => {
  const s = await run(buildConfig({ routes: [pullRoute("/hooks/a", "/a")] }));
  try {
    const moved = buildConfig({ routes: [pullRoute("/hooks/b", "/b")], patch: (c) => (c.ingress = { ...c.ingress, listen: { host: "127.0.0.1", port: 1, address: "127.0.0.1:1" } }) });
    const outcome = s.app.reload(moved, null);
    assert.is(outcome.applied, false);
    assert.ok(!outcome.applied && outcome.changes.includes("ingress.listen"));
    assert.is((await call(`${s.ingress}/hooks/a`, { body: "x" })).status, 202, "old routes keep serving");
    assert.is((await call(`${s.ingress}/hooks/b`, { body: "x" })).status, 404, "nothing of the refused config applied");
  } finally {
    await s.app.stop();
  }
});

test("store failures: ingress 503 store_unavailable, Pull API 503 queue_overload, never 500", async () => {
  let failing = false;
  const plain = basic();
  const withMetrics = { ...plain, observability: { ...plain.observability, metrics: { ...plain.observability.metrics, enabled: true } } };
  // The health staleness bound is read from the app's clock: a test clock steps past it at once.
  const clock = new TestClock();
  const s = await run(withMetrics, {
    clock,
    openStore: interceptedStore((name, call) =>
      failing && ["enqueue", "dequeue", "ack", "queueStats"].includes(name) ? Promise.reject(new StoreError("unavailable", "disk gone")) : call(),
    ),
  });
  try {
    const details = () => call(`${s.admin}/healthz?details=1`, { method: "GET", headers: bearer("admin-token") });
    const healthy = await details();
    assert.equal([healthy.status, healthy.json.ok], [200, true]);
    failing = true;
    // Past the 2 s bound the last answer is no longer passed off as current.
    clock.advance(2_100);
    const failed = await details();
    assert.equal([failed.status, failed.json.ok, failed.json.diagnostics.queue], [503, false, { ok: false, error: "queue store unavailable" }]);
    const gauges = await (await fetch(s.metrics + "/metrics")).text();
    // NaN, spelled as the exposition format has it (prom-client alone writes "Nan").
    assert.match(gauges, /^spool_queue_total NaN$/m);
    assert.match(gauges, /^spool_queue_depth\{state="queued"\} NaN$/m);
    const ingress = await call(`${s.ingress}/hooks/a`, { body: "x" });
    assert.is(ingress.status, 503);
    assert.is(ingress.json.code, "store_unavailable");
    assert.ok(ingress.headers.get("retry-after"));
    const dequeue = await pullCall(`${s.pull}/a`, "dequeue", "pull-token");
    assert.is(dequeue.status, 503);
    assert.is(dequeue.json.code, "queue_overload");
    assert.match(await (await fetch(s.metrics + "/metrics")).text(), /^spool_pull_dequeue_total\{route="\/hooks\/a",status="5xx"\} 1$/m);
    const ack = await pullCall(`${s.pull}/a`, "ack", "pull-token", { lease_id: "x" });
    assert.is(ack.json.code, "queue_overload");
  } finally {
    await s.app.stop();
  }
});

test("queue_full on ingress is 503 and stores nothing", async () => {
  const s = await run(buildConfig({ routes: [pullRoute("/hooks/a", "/a")], maxDepth: 1 }));
  try {
    assert.is((await call(`${s.ingress}/hooks/a`, { body: "1" })).status, 202);
    const full = await call(`${s.ingress}/hooks/a`, { body: "2" });
    assert.is(full.status, 503);
    assert.is(full.json.code, "queue_full");
    const stats = await s.app.context.store.queueStats();
    assert.is(stats.total, 1);
  } finally {
    await s.app.stop();
  }
});

test("drop_policy drop_oldest: ingress at max_depth removes the oldest queued message, answers 202 and counts it", async () => {
  const config = buildConfig({ routes: [pullRoute("/hooks/a", "/a")], maxDepth: 2, dropPolicy: "drop_oldest" });
  const s = await run({ ...config, observability: { ...config.observability, metrics: { ...config.observability.metrics, enabled: true } } });
  try {
    const ids: string[] = [];
    for (const body of ["1", "2", "3"]) {
      const accepted = await call(`${s.ingress}/hooks/a`, { body });
      assert.is(accepted.status, 202);
      ids.push(...(accepted.json.ids as string[]));
    }
    assert.equal((await s.app.context.store.listMessages({ limit: 10 })).map((m) => m.id).sort(), ids.slice(1).sort());
    const metrics = await (await fetch(s.metrics + "/metrics")).text();
    assert.match(metrics, /^spool_queue_dropped_total 1$/m);
    assert.match(metrics, /^spool_ingress_accepted_total 3$/m);
  } finally {
    await s.app.stop();
  }
});

test.run();
