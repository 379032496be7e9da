// HMAC replay protection over real HTTP (createApp in-process): a request that verified but was then
// refused gives its nonce back, so the sender's identical retry is accepted once there is room; a
// nonce whose request was accepted stays used (docs/decisions.md D14).
import { createHash, createHmac } from "node:crypto";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Route, SpoolConfig } from "../../compiler/ir.js";
import { createApp, type SpoolApp } from "../../runtime/app/app.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { buildConfig, pullRoute, raw } from "./helpers/ir.js";
import { call, pullCall } from "./helpers/http.js";

const temp = makeTempDir("ingress-replay");
let counter = 0;
const SECRET = "replay-secret";

interface Running {
  app: SpoolApp;
  ingress: string;
  pull: string;
}

async function run(config: SpoolConfig): Promise<Running> {
  const app = createApp(config, { version: "0.1.0", storeLocation: { sqlitePath: join(temp.path, `db-${++counter}.sqlite`) } });
  const { addresses } = await app.start();
  const url = (name: string) => `http://127.0.0.1:${addresses.find((a) => a.name.split("+").includes(name))!.port}`;
  return { app, ingress: url("ingress"), pull: url("pull") };
}

/** A pull route verified by generic HMAC with the default headers and a 5 min tolerance. */
function signedRoute(extra: Partial<Route> = {}): Route {
  return pullRoute("/hooks/signed", "/signed", {
    auth: {
      kind: "hmac",
      secrets: [{ id: null, source: raw(SECRET), validFromMs: null, validUntilMs: null }],
      runtimePools: [],
      signatureHeader: "X-Signature",
      timestampHeader: "X-Timestamp",
      nonceHeader: "X-Nonce",
      toleranceMs: 300_000,
    },
    ...extra,
  });
}

/** The headers a sender computes once and sends again unchanged on every retry. */
function signed(nonce: string, body: string): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const bodyHash = createHash("sha256").update(body).digest("hex");
  return {
    "x-signature": createHmac("sha256", SECRET).update(`POST\n/hooks/signed\n${timestamp}\n${bodyHash}`).digest("hex"),
    "x-timestamp": timestamp,
    "x-nonce": nonce,
  };
}

async function storedPayloads(s: Running, pullPath: string): Promise<string[]> {
  const { items } = (await pullCall(`${s.pull}${pullPath}`, "dequeue", "pull-token", { batch: 10 })).json;
  return items.map((i: { payload_b64: string }) => Buffer.from(i.payload_b64, "base64").toString());
}

const test = suite("ingress replay protection over HTTP");

test.after(() => temp.cleanup());

test("a verified request refused with queue_full releases its nonce: the same retry is accepted once there is room, then a replay is refused", async () => {
  const s = await run(buildConfig({ routes: [pullRoute("/hooks/filler", "/filler"), signedRoute()], maxDepth: 1 }));
  try {
    assert.is((await call(`${s.ingress}/hooks/filler`, { body: "fills the queue" })).status, 202);
    const body = '{"event":"order.paid"}';
    const headers = signed("nonce-queue-full", body);

    const refused = await call(`${s.ingress}/hooks/signed`, { headers, body });
    assert.equal([refused.status, refused.json.code], [503, "queue_full"], "verification passed, admission refused");

    // Room again: the filler is dequeued and acked.
    const { items } = (await pullCall(`${s.pull}/filler`, "dequeue", "pull-token")).json;
    assert.is((await pullCall(`${s.pull}/filler`, "ack", "pull-token", { lease_id: items[0].lease_id })).status, 204);

    const retried = await call(`${s.ingress}/hooks/signed`, { headers, body });
    assert.is(retried.status, 202, "the identical retry (same nonce, timestamp and signature) is accepted");

    const replayed = await call(`${s.ingress}/hooks/signed`, { headers, body });
    assert.equal([replayed.status, replayed.json.code], [401, "unauthorized"], "the accepted nonce cannot be used again");
    assert.equal(await storedPayloads(s, "/signed"), [body], "stored exactly once");
  } finally {
    await s.app.stop();
  }
});

test("a captured request sent again with a new nonce, or with a query string added, is refused: its signature is single-use too", async () => {
  const s = await run(buildConfig({ routes: [signedRoute()] }));
  try {
    const body = '{"event":"order.paid"}';
    const headers = signed("nonce-original", body);
    assert.is((await call(`${s.ingress}/hooks/signed`, { headers, body })).status, 202);
    const newNonce = await call(`${s.ingress}/hooks/signed`, { headers: { ...headers, "x-nonce": "nonce-fresh" }, body });
    assert.equal([newNonce.status, newNonce.json.code], [401, "unauthorized"], "same signature, another nonce");
    const twoNonces = await call(`${s.ingress}/hooks/signed`, { headers: { ...headers, "x-nonce": "nonce-a, nonce-b" }, body });
    assert.is(twoNonces.status, 401, "same signature, a nonce list");
    const withQuery = await call(`${s.ingress}/hooks/signed?evil=1`, { headers: { ...headers, "x-nonce": "nonce-query" }, body });
    assert.is(withQuery.status, 401, "same signature, a query string the signature does not cover");
    assert.equal(await storedPayloads(s, "/signed"), [body], "stored exactly once");
    const fresh = '{"event":"order.shipped"}';
    assert.is((await call(`${s.ingress}/hooks/signed`, { headers: signed("nonce-fresh", fresh), body: fresh })).status, 202, "a new signed request with the unused nonce");
  } finally {
    await s.app.stop();
  }
});

test("a verified request refused by the route's rate limit releases its nonce as well", async () => {
  const limited = (burst: number) => buildConfig({ routes: [signedRoute({ rateLimit: { rps: 0.01, burst } })] });
  const s = await run(limited(1));
  try {
    const first = '{"n":1}';
    assert.is((await call(`${s.ingress}/hooks/signed`, { headers: signed("nonce-first", first), body: first })).status, 202);
    const second = '{"n":2}';
    const headers = signed("nonce-limited", second);
    const refused = await call(`${s.ingress}/hooks/signed`, { headers, body: second });
    assert.equal([refused.status, refused.json.code], [429, "rate_limited"]);

    // A larger burst starts a full bucket (rps 0.01 would otherwise take 100 s to refill).
    assert.is(s.app.reload(limited(3), null).applied, true);
    assert.is((await call(`${s.ingress}/hooks/signed`, { headers, body: second })).status, 202, "the identical retry is accepted");
    const replay = await call(`${s.ingress}/hooks/signed`, { headers: signed("nonce-first", first), body: first });
    assert.equal([replay.status, replay.json.code], [401, "unauthorized"], "the nonce accepted before the reload stays used");
    assert.equal((await storedPayloads(s, "/signed")).sort(), [first, second]);
  } finally {
    await s.app.stop();
  }
});

test.run();
