// The Pull API in-process over real HTTP: the per-token `pull_api { rate_limit }` and the
// spool_pull_lease_active gauge read through the metrics endpoint.
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { RateLimit, SpoolConfig } from "../../compiler/ir.js";
import { createApp, type SpoolApp } from "../../runtime/app/app.js";
import { openStore, type StoreDeps, type StoreSpec } from "../../runtime/store/open.js";
import type { Store } from "../../runtime/store/store.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { buildConfig, pullRoute, raw } from "./helpers/ir.js";
import { call, eventually, pullCall } from "./helpers/http.js";

const temp = makeTempDir("pull-api");
let counter = 0;

interface Running {
  app: SpoolApp;
  ingress: string;
  pull: string;
  metrics: string;
}

async function run(config: SpoolConfig, wrapStore?: (store: Store) => Store): Promise<Running> {
  const app = createApp(config, {
    version: "0.1.0",
    storeLocation: { sqlitePath: join(temp.path, `db-${++counter}.sqlite`) },
    ...(wrapStore ? { openStore: async (spec: StoreSpec, deps: StoreDeps) => wrapStore(await openStore(spec, deps)) } : {}),
  });
  const { addresses } = await app.start();
  const url = (name: string) => `http://127.0.0.1:${addresses.find((a) => a.name.split("+").includes(name))!.port}`;
  return { app, ingress: url("ingress"), pull: url("pull"), metrics: `${url("metrics")}/metrics` };
}

/** Two fleets with global tokens on /hooks/a, a third with its own token on /hooks/own; metrics on. */
function fleets(rateLimit: RateLimit | null): SpoolConfig {
  return buildConfig({
    routes: [pullRoute("/hooks/a", "/a"), pullRoute("/hooks/b", "/b"), pullRoute("/hooks/own", "/own", {}, [raw("own-token")])],
    pullTokens: ["fleet-a", "fleet-b"],
    patch: (c) => {
      c.pullApi = { ...c.pullApi, rateLimit };
      c.observability = { ...c.observability, metrics: { ...c.observability.metrics, enabled: true } };
    },
  });
}

async function metricValue(url: string, series: string): Promise<number | undefined> {
  const text = await (await fetch(url)).text();
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const test = suite("Pull API in-process");

test.after(() => temp.cleanup());

test("a token past its burst gets 429 rate_limited with Retry-After on every op; other tokens are unaffected", async () => {
  const s = await run(fleets({ rps: 0.01, burst: 2 }));
  try {
    assert.is((await pullCall(`${s.pull}/a`, "dequeue", "fleet-a")).status, 200);
    assert.is((await pullCall(`${s.pull}/b`, "dequeue", "fleet-a")).status, 200, "one bucket per token, across routes");
    const limited = await pullCall(`${s.pull}/a`, "dequeue", "fleet-a");
    assert.is(limited.status, 429);
    assert.equal(Object.keys(limited.json).sort(), ["code", "detail"]);
    assert.is(limited.json.code, "rate_limited");
    assert.type(limited.json.detail, "string");
    // rps 0.01: the next token is 100 s away.
    assert.is(limited.headers.get("retry-after"), "100");
    const ack = await pullCall(`${s.pull}/a`, "ack", "fleet-a", { lease_id: "lease_0000000000000000" });
    assert.equal([ack.status, ack.json.code], [429, "rate_limited"], "ack is limited too, before the lease is looked at");

    assert.is((await pullCall(`${s.pull}/a`, "dequeue", "fleet-b")).status, 200, "another fleet keeps its own bucket");
    assert.is((await pullCall(`${s.pull}/own`, "dequeue", "own-token")).status, 200, "a route token has its own bucket");
    assert.is((await pullCall(`${s.pull}/a`, "dequeue", "not-a-token")).status, 401, "unknown tokens are refused before any bucket");

    // Every refused dequeue on a known route counts as 4xx: the 429 above, a body refused 400, a token
    // outside the route's list 403. The 401 comes before any route is looked at and counts nowhere.
    const badBody = await pullCall(`${s.pull}/a`, "dequeue", "fleet-b", { batch: 1, bogus: true });
    assert.equal([badBody.status, badBody.json.code], [400, "invalid_body"]);
    assert.is((await pullCall(`${s.pull}/own`, "dequeue", "fleet-b")).status, 403);
    const text = await (await fetch(s.metrics)).text();
    assert.match(text, /spool_pull_dequeue_total\{route="\/hooks\/a",status="4xx"\} 2\n/);
    assert.match(text, /spool_pull_dequeue_total\{route="\/hooks\/a",status="200"\} 2\n/);
    assert.match(text, /spool_pull_dequeue_total\{route="\/hooks\/own",status="4xx"\} 1\n/);
  } finally {
    await s.app.stop();
  }
});

test("without pull_api rate_limit no request is limited", async () => {
  const s = await run(fleets(null));
  try {
    for (let i = 0; i < 20; i++) assert.is((await pullCall(`${s.pull}/a`, "dequeue", "fleet-a")).status, 200);
  } finally {
    await s.app.stop();
  }
});

test("reload keeps a drained pull bucket when the limit is unchanged and starts a full one when it changes", async () => {
  const s = await run(fleets({ rps: 0.01, burst: 1 }));
  try {
    assert.is((await pullCall(`${s.pull}/a`, "dequeue", "fleet-a")).status, 200);
    assert.is((await pullCall(`${s.pull}/a`, "dequeue", "fleet-a")).status, 429);
    assert.equal(s.app.reload(fleets({ rps: 0.01, burst: 1 }), null), { applied: true, generation: 2 });
    assert.is((await pullCall(`${s.pull}/a`, "dequeue", "fleet-a")).status, 429, "the bucket survived an unchanged reload");
    assert.equal(s.app.reload(fleets({ rps: 0.01, burst: 3 }), null), { applied: true, generation: 3 }, "a pull rate limit reloads live");
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await pullCall(`${s.pull}/a`, "dequeue", "fleet-a")).status);
    assert.equal(statuses, [200, 200, 200, 429], "changed settings start with a full bucket of the new burst");
    assert.equal(s.app.reload(fleets(null), null), { applied: true, generation: 4 });
    assert.is((await pullCall(`${s.pull}/a`, "dequeue", "fleet-a")).status, 200, "removing the limit lifts it");
  } finally {
    await s.app.stop();
  }
});

test("spool_pull_lease_active shows the leased count of a route after dequeue and 0 after ack", async () => {
  const s = await run(fleets(null));
  const series = (route: string) => `spool_pull_lease_active{route="${route}"}`;
  try {
    for (const body of ["1", "2", "3"]) assert.is((await call(`${s.ingress}/hooks/a`, { body })).status, 202);
    assert.is((await call(`${s.ingress}/hooks/b`, { body: "untouched" })).status, 202);
    const { items } = (await pullCall(`${s.pull}/a`, "dequeue", "fleet-a", { batch: 2 })).json;
    assert.is(items.length, 2);
    // Queue gauges are at most 2 s stale (docs/decisions.md D32): poll until they catch up.
    await eventually(async () => ((await metricValue(s.metrics, series("/hooks/a"))) === 2 ? true : undefined), 10_000, "2 active leases on /hooks/a");
    assert.is(await metricValue(s.metrics, series("/hooks/b")), 0, "a pull route without leases shows 0");
    assert.is(await metricValue(s.metrics, series("/hooks/own")), 0);
    const acked = await pullCall(`${s.pull}/a`, "ack", "fleet-a", { lease_ids: items.map((i: { lease_id: string }) => i.lease_id) });
    assert.equal(acked.json, { acked: 2 });
    await eventually(async () => ((await metricValue(s.metrics, series("/hooks/a"))) === 0 ? true : undefined), 10_000, "0 active leases on /hooks/a");
  } finally {
    await s.app.stop();
  }
});

test("a dequeue reply with several items is exactly the documented JSON, with and without max_wait", async () => {
  const s = await run(fleets(null));
  try {
    const posted: { id: string; body: string }[] = [];
    for (const body of ['{"n":1}', "plain \u00e9 text", ""]) {
      const reply = await call(`${s.ingress}/hooks/a`, { headers: { "content-type": "text/plain", "x-trace": 'q"uote' }, body });
      assert.is(reply.status, 202);
      posted.push({ id: reply.json.ids[0], body });
    }
    const expected = (text: string, bodies: { id: string; body: string }[]) => {
      const items = JSON.parse(text).items as Record<string, unknown>[];
      assert.is(items.length, bodies.length);
      return JSON.stringify({
        items: bodies.map(({ id, body }, i) => ({
          id,
          lease_id: items[i].lease_id,
          route: "/hooks/a",
          target: "pull",
          payload_b64: Buffer.from(body).toString("base64"),
          headers: items[i].headers,
          trace: { remote_addr: "127.0.0.1", path: "/hooks/a" },
          received_at: items[i].received_at,
          attempt: 1,
          lease_until: items[i].lease_until,
        })),
      });
    };
    const now = await pullCall(`${s.pull}/a`, "dequeue", "fleet-a", { batch: 2 });
    assert.is(now.status, 200);
    assert.is(now.headers.get("content-type"), "application/json");
    assert.is(Number(now.headers.get("content-length")), Buffer.byteLength(now.text));
    assert.is(now.text, expected(now.text, posted.slice(0, 2)));
    const first = JSON.parse(now.text).items[0];
    assert.is(first.headers["Content-Type"], "text/plain");
    assert.is(first.headers["X-Trace"], 'q"uote');
    assert.match(first.received_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(Date.parse(first.lease_until) > Date.parse(first.received_at));

    const waited = await pullCall(`${s.pull}/a`, "dequeue", "fleet-a", { batch: 5, max_wait: "2s" });
    assert.is(waited.text, expected(waited.text, posted.slice(2)));
    // Nothing left: the long poll runs out (shortly) and answers no items.
    assert.is((await pullCall(`${s.pull}/a`, "dequeue", "fleet-a", { max_wait: "50ms" })).text, '{"items":[]}');
    assert.is((await pullCall(`${s.pull}/a`, "dequeue", "fleet-a", {})).text, '{"items":[]}');
  } finally {
    await s.app.stop();
  }
});

test("messages leased for a client that closed its connection meanwhile go back to the queue at once", async () => {
  // The store's answer is held until the client has gone, as when a long poll closes in the moment
  // a message arrives; the lease itself is real.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let holding = true;
  const s = await run(fleets(null), (store) => {
    const dequeue = store.dequeue.bind(store);
    store.dequeue = async (request, signal) => {
      const leased = await dequeue(request, signal);
      if (holding) await held;
      return leased;
    };
    return store;
  });
  try {
    assert.is((await call(`${s.ingress}/hooks/a`, { body: "{}" })).status, 202);
    const gone = new AbortController();
    const abandoned = fetch(`${s.pull}/a/dequeue`, { method: "POST", headers: { authorization: "Bearer fleet-a" }, body: '{"batch":5}', signal: gone.signal }).catch(() => "aborted");
    await eventually(async () => ((await metricValue(s.metrics, 'spool_pull_lease_active{route="/hooks/a"}')) === 1 ? true : undefined), 5_000, "the lease taken");
    gone.abort();
    assert.is(await abandoned, "aborted");
    await new Promise((resolve) => setTimeout(resolve, 100));
    holding = false;
    release();
    const again = await eventually(
      async () => {
        const reply = await pullCall(`${s.pull}/a`, "dequeue", "fleet-a", { batch: 5 });
        return reply.json.items.length === 1 ? reply.json.items : undefined;
      },
      5_000,
      "the message dequeued again before its 30 s lease ran out",
    );
    assert.is(again[0].attempt, 2, "the abandoned lease counts as an attempt");
  } finally {
    await s.app.stop();
  }
});

test.run();
