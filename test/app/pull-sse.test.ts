// The SSE stream of the Pull API (GET {pull.path}/stream) in-process over real HTTP on a real SQLite
// file: events with the full dequeue item, keepalives, sse_max_connection, competing streams, a
// client that closes while its messages are being leased, a store failure's error event, shutdown,
// the checks before a stream opens, and the stream metrics.
import { join } from "node:path";
import Database from "better-sqlite3";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { SpoolConfig } from "../../compiler/ir.js";
import { createApp, type SpoolApp } from "../../runtime/app/app.js";
import { openStore, type StoreDeps, type StoreSpec } from "../../runtime/store/open.js";
import type { Store } from "../../runtime/store/store.js";
import type { Mutable } from "../helpers/ir.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { call, eventually, pullCall } from "./helpers/http.js";
import { buildConfig, pullRoute, raw } from "./helpers/ir.js";
import { openStream, type SseReader } from "./helpers/sse.js";

const temp = makeTempDir("pull-sse");
let counter = 0;
const ITEM_FIELDS = ["id", "lease_id", "route", "target", "payload_b64", "headers", "trace", "received_at", "attempt", "lease_until"];

interface Running {
  app: SpoolApp;
  ingress: string;
  pull: string;
  metrics: string;
  dbPath: string;
}

async function run(patch: (c: Mutable<SpoolConfig>) => void = () => {}, wrapStore?: (store: Store) => Store): Promise<Running> {
  const dbPath = join(temp.path, `db-${++counter}.sqlite`);
  const app = createApp(config(patch), {
    version: "0.1.0",
    storeLocation: { sqlitePath: dbPath },
    ...(wrapStore ? { openStore: async (spec: StoreSpec, deps: StoreDeps) => wrapStore(await openStore(spec, deps)) } : {}),
  });
  const { addresses } = await app.start();
  const url = (name: string) => `http://127.0.0.1:${addresses.find((a) => a.name.split("+").includes(name))!.port}`;
  return { app, ingress: url("ingress"), pull: url("pull"), metrics: `${url("metrics")}/metrics`, dbPath };
}

/** /hooks/a and /hooks/b pulled at /a and /b with the global token, /hooks/own at /own with its own. */
function config(patch: (c: Mutable<SpoolConfig>) => void): SpoolConfig {
  return buildConfig({
    routes: [pullRoute("/hooks/a", "/a"), pullRoute("/hooks/b", "/b"), pullRoute("/hooks/own", "/own", {}, [raw("own-token")])],
    pullTokens: ["pull-token"],
    patch: (c) => {
      c.observability = { ...c.observability, metrics: { ...c.observability.metrics, enabled: true } };
      patch(c);
    },
  });
}

async function ingest(s: Running, path: string, bodies: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const body of bodies) {
    const reply = await call(`${s.ingress}${path}`, { body, headers: { "content-type": "application/json", "x-test": "yes" } });
    assert.is(reply.status, 202, reply.text);
    ids.push(reply.json.ids[0]);
  }
  return ids;
}

async function metricValue(url: string, series: string): Promise<number | undefined> {
  const text = await (await fetch(url)).text();
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const messages = (reader: SseReader) => reader.events.filter((e) => e.event === "message").map((e) => ({ id: e.id, item: JSON.parse(e.data) }));

const test = suite("Pull API SSE stream");

test.after(() => temp.cleanup());

test("events arrive in order, one per message, the lease id as event id and the full dequeue item as data", async () => {
  const s = await run();
  const reader = await openStream(`${s.pull}/a/stream?batch=2&lease_ttl=1m`, "pull-token");
  try {
    assert.is(reader.response.statusCode, 200);
    assert.is(reader.response.headers["content-type"], "text/event-stream");
    assert.is(reader.response.headers["cache-control"], "no-cache");
    assert.is(reader.response.headers["x-accel-buffering"], "no");
    const ids = await ingest(s, "/hooks/a", ["{\"n\":1}", "{\"n\":2}", "{\"n\":3}", "{\"n\":4}", "{\"n\":5}"]);
    await reader.waitForEvents(5);
    const got = messages(reader);
    assert.equal(got.map((m) => m.item.id), ids, "in ingestion order");
    for (const [i, { id, item }] of got.entries()) {
      assert.equal(Object.keys(item), ITEM_FIELDS);
      assert.is(id, item.lease_id);
      assert.is(Buffer.from(item.payload_b64, "base64").toString(), `{"n":${i + 1}}`);
      assert.is(item.route, "/hooks/a");
      assert.is(item.target, "pull");
      assert.is(item.attempt, 1);
      assert.is(item.headers["X-Test"], "yes");
      // lease_ttl=1m: the lease runs about a minute past its receipt.
      const leaseMs = Date.parse(item.lease_until) - Date.now();
      assert.ok(leaseMs > 30_000 && leaseMs <= 60_000, `lease_until ${item.lease_until}`);
    }
    // Each data line is one line of JSON; the raw text is exactly the events and nothing else.
    assert.not.match(reader.raw(), /^(?!id: |event: |data: |$).*/m);
    // Settled with the POST operations.
    const ack = await pullCall(`${s.pull}/a`, "ack", "pull-token", { lease_ids: got.map((m) => m.id) });
    assert.equal([ack.status, ack.json], [200, { acked: 5 }]);
    assert.is(await metricValue(s.metrics, 'spool_pull_sse_messages_sent_total{route="/hooks/a"}'), 5);
    assert.is(await metricValue(s.metrics, 'spool_pull_sse_connections_total{route="/hooks/a"}'), 1);
    assert.is(await metricValue(s.metrics, 'spool_pull_sse_connection_active{route="/hooks/a"}'), 1);
  } finally {
    reader.close();
    await s.app.stop();
  }
});

test("an idle stream writes `: keepalive` at the configured interval and wakes for a message at once", async () => {
  // A keepalive of 200 ms for the first stream; then a reload to 1 h for streams opened afterwards.
  const s = await run((c) => (c.pullApi = { ...c.pullApi, sseKeepaliveMs: 200 }));
  const fast = await openStream(`${s.pull}/a/stream`, "pull-token");
  try {
    await fast.waitFor(() => fast.comments.filter((c) => c === "keepalive").length >= 2, "two keepalives");
    assert.is(fast.events.length, 0);
    assert.match(fast.raw(), /^: keepalive\n\n/);

    assert.equal(s.app.reload(config((c) => (c.pullApi = { ...c.pullApi, sseKeepaliveMs: 3_600_000 })), null), { applied: true, generation: 2 });
    const slow = await openStream(`${s.pull}/b/stream`, "pull-token");
    try {
      // Woken by the message, never by a keepalive an hour away.
      const [id] = await ingest(s, "/hooks/b", ["wake"]);
      const [event] = await slow.waitForEvents(1, 5_000);
      assert.is(JSON.parse(event.data).id, id);
      assert.equal(slow.comments, []);
    } finally {
      slow.close();
    }
  } finally {
    fast.close();
    await s.app.stop();
  }
});

test("sse_max_connection ends the response cleanly; the setting applies to streams opened after a reload", async () => {
  const s = await run((c) => (c.pullApi = { ...c.pullApi, sseMaxConnectionMs: 300 }));
  try {
    const capped = await openStream(`${s.pull}/a/stream`, "pull-token");
    await capped.ended;
    assert.ok(capped.response.complete, "the response ended with its terminating chunk, not a reset");

    assert.equal(s.app.reload(config(() => {}), null), { applied: true, generation: 2 });
    const open = await openStream(`${s.pull}/a/stream`, "pull-token");
    let ended = false;
    void open.ended.then(() => (ended = true));
    await ingest(s, "/hooks/a", ["still open"]);
    await open.waitForEvents(1);
    assert.not.ok(ended, "without sse_max_connection the stream stays open");
    open.close();
    await eventually(async () => ((await metricValue(s.metrics, 'spool_pull_sse_connection_active{route="/hooks/a"}')) === 0 ? true : undefined));
    assert.is(await metricValue(s.metrics, 'spool_pull_sse_connections_total{route="/hooks/a"}'), 2);
  } finally {
    await s.app.stop();
  }
});

test("streams on one route are competing consumers: no message goes to two streams while its lease is valid", async () => {
  const s = await run();
  const readers = [await openStream(`${s.pull}/a/stream?batch=3&lease_ttl=5m`, "pull-token"), await openStream(`${s.pull}/a/stream?lease_ttl=5m`, "pull-token")];
  try {
    const ids = await ingest(
      s,
      "/hooks/a",
      Array.from({ length: 60 }, (_, i) => `m${i}`),
    );
    await eventually(() => (readers.reduce((n, r) => n + messages(r).length, 0) >= 60 ? true : undefined), 15_000, "60 events across both streams");
    const seen = readers.flatMap((r) => messages(r).map((m) => m.item.id));
    assert.is(seen.length, 60);
    assert.equal([...new Set(seen)].sort(), [...ids].sort(), "every message once");
    // A dequeue beside them finds nothing left: all 60 are leased.
    assert.equal((await pullCall(`${s.pull}/a`, "dequeue", "pull-token")).json.items, []);
  } finally {
    for (const r of readers) r.close();
    await s.app.stop();
  }
});

test("messages leased for a client that has closed go back to queued at once", async () => {
  // The real store, with a gate between leasing and the stream writing: the test closes the client
  // while the stream holds leased messages it has not written.
  let gate: Promise<void> | null = null;
  let leasedForGate = 0;
  const s = await run(undefined, (store) => {
    const dequeue = store.dequeue.bind(store);
    return Object.assign(Object.create(store), {
      async dequeue(...args: Parameters<Store["dequeue"]>) {
        const leased = await dequeue(...args);
        if (leased.length > 0 && gate) {
          leasedForGate += leased.length;
          await gate;
        }
        return leased;
      },
    }) as Store;
  });
  let open!: () => void;
  gate = new Promise((resolve) => (open = resolve));
  const reader = await openStream(`${s.pull}/a/stream?lease_ttl=5m`, "pull-token");
  try {
    const [id] = await ingest(s, "/hooks/a", ["unwritten"]);
    await eventually(() => (leasedForGate > 0 ? true : undefined), 5_000, "the stream leasing the message");
    reader.close();
    await reader.ended;
    await new Promise((r) => setTimeout(r, 100)); // lets the server see the close before the gate opens
    gate = null;
    open();
    // The lease was for five minutes: only the release makes it ready now.
    const again = await eventually(async () => {
      const { items } = (await pullCall(`${s.pull}/a`, "dequeue", "pull-token")).json;
      return items.length > 0 ? items[0] : undefined;
    }, 5_000, "the message back in the queue");
    assert.is(again.id, id);
    assert.is(again.attempt, 2, "the stream's lease counted as an attempt");
    assert.equal(reader.events, [], "nothing was written to the closed client");
    assert.is(await metricValue(s.metrics, 'spool_pull_sse_messages_sent_total{route="/hooks/a"}'), undefined);
  } finally {
    await s.app.stop();
  }
});

test("a store failure writes an error event and ends the response", async () => {
  const s = await run();
  const reader = await openStream(`${s.pull}/a/stream`, "pull-token");
  try {
    // Break the real database underneath the running store: its messages table disappears.
    const db = new Database(s.dbPath);
    try {
      db.exec("ALTER TABLE messages RENAME TO messages_gone");
    } finally {
      db.close();
    }
    await reader.ended;
    const last = reader.events.at(-1);
    assert.is(last?.event, "error", reader.raw());
    assert.type(last?.data, "string");
    assert.ok(last!.data.length > 0);
    assert.not.match(last!.data, /messages_gone|SQLITE|no such table/i, "the store's own message stays in the log");
    assert.ok(reader.response.complete);
  } finally {
    reader.close();
    await s.app.stop();
  }
});

test("shutdown ends every open stream at once", async () => {
  const s = await run((c) => (c.pullApi = { ...c.pullApi, sseKeepaliveMs: 3_600_000 }));
  const readers = [await openStream(`${s.pull}/a/stream`, "pull-token"), await openStream(`${s.pull}/b/stream`, "pull-token")];
  await s.app.stop(10_000);
  for (const reader of readers) {
    await reader.ended;
    assert.ok(reader.response.complete);
  }
});

test("checks before a stream opens: method, token, route, query, rate limit", async () => {
  const s = await run((c) => (c.pullApi = { ...c.pullApi, rateLimit: { rps: 0.01, burst: 2 } }));
  try {
    const post = await call(`${s.pull}/a/stream`, { method: "POST", headers: { authorization: "Bearer pull-token" } });
    assert.equal([post.status, post.headers.get("allow"), post.json.code], [405, "GET", "method_not_allowed"]);
    const getDequeue = await call(`${s.pull}/a/dequeue`, { method: "GET", headers: { authorization: "Bearer pull-token" } });
    assert.equal([getDequeue.status, getDequeue.headers.get("allow")], [405, "POST"]);

    const get = (path: string, token?: string) => call(`${s.pull}${path}`, { method: "GET", headers: token ? { authorization: `Bearer ${token}` } : {} });
    assert.equal([(await get("/a/stream")).status, (await get("/a/stream")).json.code], [401, "unauthorized"]);
    assert.is((await get("/a/stream", "nope")).status, 401);
    assert.equal((await get("/own/stream", "pull-token")).json.code, "forbidden", "a route with its own tokens refuses the global one");
    assert.equal((await get("/own/stream", "pull-token")).status, 403);
    const missing = await get("/nowhere/stream", "pull-token");
    assert.equal([missing.status, missing.json.code], [404, "not_found"]);

    for (const query of ["batch=0", "batch=x", "batch=1.5", "batch=-1", "lease_ttl=abc", "lease_ttl=0s", "batch=1&batch=2"]) {
      const bad = await get(`/a/stream?${query}`, "pull-token");
      assert.equal([bad.status, bad.json.code], [400, "invalid_query"], query);
      assert.type(bad.json.detail, "string");
    }
    // Unknown parameters and Last-Event-ID are ignored; a stream takes one token of the bucket (burst 2).
    const one = await openStream(`${s.pull}/own/stream?cursor=7`, "own-token");
    assert.is(one.response.statusCode, 200);
    const two = await openStream(`${s.pull}/own/stream?batch=5000&lease_ttl=1h`, "own-token");
    assert.is(two.response.statusCode, 200, "batch and lease_ttl above their caps are clamped, not refused");
    one.close();
    two.close();
    const limited = await get("/own/stream", "own-token");
    assert.equal([limited.status, limited.json.code, limited.headers.get("retry-after")], [429, "rate_limited", "100"]);
  } finally {
    await s.app.stop();
  }
});

test.run();
