import { createHash, createHmac } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { verifyBasicAuth } from "../../runtime/ingress/verify/basic.js";
import { authenticateIngress, ingressAuthError, withRuntimeVersions, type IngressAuth } from "../../runtime/ingress/verify/index.js";
import { forwardAuth } from "../../runtime/ingress/verify/forward.js";
import { verifyGenericHmac } from "../../runtime/auth/hmac.js";
import { NonceCache } from "../../runtime/ingress/verify/nonce-cache.js";
import { verifyProvider } from "../../runtime/ingress/verify/providers.js";
import { matchesAny, secretDigest } from "../../runtime/auth/constant-time.js";
import { verifyBearerToken } from "../../runtime/auth/token.js";
import type { InboundRequest, RequestHeaders } from "../../runtime/auth/types.js";
import { DEFAULTS } from "../../compiler/index.js";

/** What the compiler resolves for an `auth hmac` that sets only its secrets (compiler/defaults.ts). */
const HMAC_AUTH = {
  signatureHeader: DEFAULTS.hmacSignatureHeader,
  timestampHeader: DEFAULTS.hmacTimestampHeader,
  nonceHeader: DEFAULTS.hmacNonceHeader,
  toleranceMs: DEFAULTS.hmacToleranceMs,
};

const nowMs = Date.UTC(2026, 0, 15, 12, 0, 0);
const nowSeconds = nowMs / 1000;
const body = Buffer.from('{"event":"push"}');

function inbound(headers: RequestHeaders, overrides: Partial<InboundRequest> = {}): InboundRequest {
  return { method: "POST", path: "/hooks/in", headers, body, nowMs, ...overrides };
}

const hexMac = (secret: string | Buffer, message: string | Buffer) => createHmac("sha256", secret).update(message).digest("hex");

// ---------------------------------------------------------------------------------------------
const tokens = suite("bearer and basic");

tokens("matchesAny compares the given digest, computed once for several lists", () => {
  assert.is(matchesAny("x", ["a", "x"]), 1);
  assert.is(matchesAny("x", ["a", "x"], secretDigest("x")), 1);
  assert.is(matchesAny("x", ["a", "b"], secretDigest("x")), -1);
  // The digest is what is compared: the digest of "a" matches "a" whatever the value beside it.
  assert.is(matchesAny("x", ["a", "x"], secretDigest("a")), 0);
});

tokens("a listed bearer token passes and reports which entry matched", () => {
  const result = verifyBearerToken({ authorization: "Bearer second" }, ["first", "second"]);
  assert.equal(result, { ok: true, token: "second", matchedIndex: 1 });
});

tokens("the Bearer scheme is case-insensitive", () => {
  assert.ok(verifyBearerToken({ authorization: "bEaReR first" }, ["first"]).ok);
});

tokens("missing, malformed and unknown bearer tokens fail with distinct reasons", () => {
  assert.equal(verifyBearerToken({}, ["first"]), { ok: false, reason: "missing_credentials" });
  assert.equal(verifyBearerToken({ authorization: "Basic Zm9vOmJhcg==" }, ["first"]), { ok: false, reason: "malformed_credentials" });
  assert.equal(verifyBearerToken({ authorization: "Bearer" }, ["first"]), { ok: false, reason: "malformed_credentials" });
  assert.equal(verifyBearerToken({ authorization: "Bearer firs" }, ["first"]), { ok: false, reason: "invalid_credentials" });
  assert.equal(verifyBearerToken({ authorization: "Bearer first-and-more" }, ["first"]), { ok: false, reason: "invalid_credentials" });
  assert.equal(verifyBearerToken({ authorization: "Bearer first" }, []), { ok: false, reason: "invalid_credentials" });
});

const basic = (user: string, pass: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}` });
const basicPairs = [
  { username: "alice", password: "a-secret" },
  { username: "bob", password: "b:secret" },
];

tokens("basic auth accepts any configured pair, passwords may contain colons", () => {
  assert.equal(verifyBasicAuth(basic("alice", "a-secret"), basicPairs), { ok: true, username: "alice" });
  assert.equal(verifyBasicAuth(basic("bob", "b:secret"), basicPairs), { ok: true, username: "bob" });
});

tokens("basic auth refuses crossed pairs, wrong passwords, missing and malformed headers", () => {
  assert.equal(verifyBasicAuth(basic("alice", "b:secret"), basicPairs), { ok: false, reason: "invalid_credentials" });
  assert.equal(verifyBasicAuth(basic("alice", "a-secre"), basicPairs), { ok: false, reason: "invalid_credentials" });
  assert.equal(verifyBasicAuth({}, basicPairs), { ok: false, reason: "missing_credentials" });
  assert.equal(verifyBasicAuth({ authorization: "Basic !!!" }, basicPairs), { ok: false, reason: "malformed_credentials" });
  assert.equal(verifyBasicAuth({ authorization: `Basic ${Buffer.from("nocolon").toString("base64")}` }, basicPairs), {
    ok: false,
    reason: "malformed_credentials",
  });
});

// ---------------------------------------------------------------------------------------------
const generic = suite("generic hmac");

function signGeneric(secret: string, timestampSeconds: number, overrides: { method?: string; path?: string; body?: Buffer } = {}) {
  const bodyHash = createHash("sha256").update(overrides.body ?? body).digest("hex");
  const message = `${overrides.method ?? "POST"}\n${overrides.path ?? "/hooks/in"}\n${timestampSeconds}\n${bodyHash}`;
  return { "x-signature": hexMac(secret, message), "x-timestamp": String(timestampSeconds), "x-nonce": "nonce-1" };
}

generic("a good signature passes and hands back its nonce and signature as replay keys, with their expiry", () => {
  const headers = signGeneric("s3cret", nowSeconds);
  const result = verifyGenericHmac(inbound({ ...headers, "x-signature": headers["x-signature"].toUpperCase() }), { ...HMAC_AUTH, secrets: [{ value: "s3cret" }] });
  assert.equal(result, { ok: true, replay: { keys: ["nonce:nonce-1", `mac:${headers["x-signature"]}`], expiresAtMs: nowMs + 300_000 } });
});

generic("the signature covers method, path and body", () => {
  const headers = signGeneric("s3cret", nowSeconds);
  const options = { ...HMAC_AUTH, secrets: [{ value: "s3cret" }] };
  assert.equal(verifyGenericHmac(inbound(headers, { path: "/hooks/other" }), options), { ok: false, reason: "invalid_credentials" });
  assert.equal(verifyGenericHmac(inbound(headers, { method: "PUT" }), options), { ok: false, reason: "invalid_credentials" });
  assert.equal(verifyGenericHmac(inbound(headers, { body: Buffer.from("{}") }), options), { ok: false, reason: "invalid_credentials" });
});

generic("a wrong secret, a missing header or a malformed signature is refused", () => {
  const options = { ...HMAC_AUTH, secrets: [{ value: "s3cret" }] };
  assert.equal(verifyGenericHmac(inbound(signGeneric("other", nowSeconds)), options), { ok: false, reason: "invalid_credentials" });
  for (const name of ["x-signature", "x-timestamp", "x-nonce"]) {
    const headers: Record<string, string> = { ...signGeneric("s3cret", nowSeconds) };
    delete headers[name];
    assert.equal(verifyGenericHmac(inbound(headers), options), { ok: false, reason: "missing_credentials" }, name);
  }
  const short = { ...signGeneric("s3cret", nowSeconds), "x-signature": "abcd" };
  assert.equal(verifyGenericHmac(inbound(short), options), { ok: false, reason: "malformed_credentials" });
  const longNonce = { ...signGeneric("s3cret", nowSeconds), "x-nonce": "n".repeat(257) };
  assert.equal(verifyGenericHmac(inbound(longNonce), options), { ok: false, reason: "malformed_credentials" });
});

generic("timestamps outside the tolerance are refused in both directions; the edge is accepted", () => {
  const options = { ...HMAC_AUTH, secrets: [{ value: "s3cret" }] };
  assert.ok(verifyGenericHmac(inbound(signGeneric("s3cret", nowSeconds - 300)), options).ok);
  assert.equal(verifyGenericHmac(inbound(signGeneric("s3cret", nowSeconds - 301)), options), { ok: false, reason: "timestamp_out_of_tolerance" });
  assert.equal(verifyGenericHmac(inbound(signGeneric("s3cret", nowSeconds + 301)), options), { ok: false, reason: "timestamp_out_of_tolerance" });
});

generic("header names and tolerance are configurable", () => {
  const signed = signGeneric("s3cret", nowSeconds - 30);
  const headers = { "x-sig": signed["x-signature"], "x-ts": signed["x-timestamp"], "x-id": "abc" };
  const options = { ...HMAC_AUTH, secrets: [{ value: "s3cret" }], signatureHeader: "X-Sig", timestampHeader: "X-Ts", nonceHeader: "X-Id" };
  assert.ok(verifyGenericHmac(inbound(headers), options).ok);
  assert.equal(verifyGenericHmac(inbound(headers), { ...options, toleranceMs: 10_000 }), { ok: false, reason: "timestamp_out_of_tolerance" });
});

generic("rotation: the secret valid at the request timestamp verifies, an expired one does not", () => {
  const switchMs = nowMs - 60_000;
  const secrets = [
    { value: "old", validUntilMs: switchMs },
    { value: "new", validFromMs: switchMs },
  ];
  // Signed before the switch with the old secret: still inside the tolerance, so accepted now.
  assert.ok(verifyGenericHmac(inbound(signGeneric("old", switchMs / 1000 - 1)), { ...HMAC_AUTH, secrets }).ok);
  // Signed at the switch (valid_until exclusive, valid_from inclusive).
  assert.equal(verifyGenericHmac(inbound(signGeneric("old", switchMs / 1000)), { ...HMAC_AUTH, secrets }), { ok: false, reason: "invalid_credentials" });
  assert.ok(verifyGenericHmac(inbound(signGeneric("new", switchMs / 1000)), { ...HMAC_AUTH, secrets }).ok);
  assert.equal(verifyGenericHmac(inbound(signGeneric("new", switchMs / 1000 - 1)), { ...HMAC_AUTH, secrets }), { ok: false, reason: "invalid_credentials" });
  // No secret valid at all.
  const expired = [{ value: "old", validUntilMs: nowMs - 600_000 }];
  assert.equal(verifyGenericHmac(inbound(signGeneric("old", nowSeconds)), { ...HMAC_AUTH, secrets: expired }), { ok: false, reason: "no_secret_valid" });
});

// ---------------------------------------------------------------------------------------------
const replay = suite("nonce replay cache");

function testClock(startMs = nowMs) {
  let current = startMs;
  return { now: () => current, advance: (ms: number) => (current += ms) };
}

replay("a committed nonce is refused until it expires, then accepted again", () => {
  const clock = testClock();
  const cache = new NonceCache({ clock });
  assert.is(cache.claim("/r\0n1", nowMs + 1_000), "claimed");
  cache.commit("/r\0n1");
  assert.is(cache.claim("/r\0n1", nowMs + 1_000), "replayed");
  clock.advance(999);
  assert.is(cache.claim("/r\0n1", nowMs + 1_000), "replayed");
  clock.advance(1);
  assert.is(cache.claim("/r\0n1", nowMs + 5_000), "claimed");
});

replay("a concurrent replay is refused while the first request is in flight", () => {
  const cache = new NonceCache({ clock: testClock() });
  assert.is(cache.claim("n1", nowMs + 60_000), "claimed");
  assert.is(cache.claim("n1", nowMs + 60_000), "replayed");
  assert.is(cache.claim("n2", nowMs + 60_000), "claimed", "other nonces are unaffected");
});

replay("a released claim lets the sender's retry through; release after commit changes nothing", () => {
  const cache = new NonceCache({ clock: testClock() });
  cache.claim("n1", nowMs + 60_000);
  cache.release("n1");
  assert.is(cache.claim("n1", nowMs + 60_000), "claimed");
  cache.commit("n1");
  cache.release("n1");
  assert.is(cache.claim("n1", nowMs + 60_000), "replayed");
});

replay("a full cache forgets the nonce that expires first", () => {
  const cache = new NonceCache({ clock: testClock(), capacity: 3 });
  cache.claim("late", nowMs + 30_000);
  cache.claim("early", nowMs + 10_000);
  cache.claim("middle", nowMs + 20_000);
  for (const key of ["late", "early", "middle"]) cache.commit(key);
  assert.is(cache.claim("new", nowMs + 40_000), "claimed");
  assert.is(cache.size, 3);
  assert.is(cache.claim("late", nowMs + 30_000), "replayed");
  assert.is(cache.claim("middle", nowMs + 20_000), "replayed");
  // "early" was evicted, so it is claimable again (the documented cost of a bounded cache).
  assert.is(cache.claim("early", nowMs + 10_000), "claimed");
});

replay("many released claims do not grow the cache", () => {
  const cache = new NonceCache({ clock: testClock(), capacity: 100 });
  for (let i = 0; i < 10_000; i++) {
    cache.claim(`n${i}`, nowMs + 60_000);
    cache.release(`n${i}`);
  }
  assert.is(cache.size, 0);
});

replay("verify, claim, refuse with 503, release, retry: the retry is accepted", () => {
  const cache = new NonceCache({ clock: testClock() });
  const request = inbound(signGeneric("s3cret", nowSeconds));
  const first = verifyGenericHmac(request, { ...HMAC_AUTH, secrets: [{ value: "s3cret" }] });
  assert.ok(first.ok);
  if (!first.ok) return;
  const [key] = first.replay.keys;
  assert.is(cache.claim(key, first.replay.expiresAtMs), "claimed");
  cache.release(key); // the store refused the message
  const retry = verifyGenericHmac(request, { ...HMAC_AUTH, secrets: [{ value: "s3cret" }] });
  assert.ok(retry.ok);
  assert.is(cache.claim(key, first.replay.expiresAtMs), "claimed");
  cache.commit(key);
  assert.is(cache.claim(key, first.replay.expiresAtMs), "replayed");
});

// ---------------------------------------------------------------------------------------------
const presets = suite("provider presets");

presets("github: sha256=<hex> over the body", () => {
  const options = { ...HMAC_AUTH, secrets: [{ value: "gh" }] };
  assert.equal(verifyProvider("github", inbound({ "x-hub-signature-256": `sha256=${hexMac("gh", body)}` }), options), { ok: true });
  assert.equal(verifyProvider("github", inbound({ "x-hub-signature-256": hexMac("gh", body) }), options), { ok: false, reason: "malformed_credentials" });
  assert.equal(verifyProvider("github", inbound({ "x-hub-signature-256": `sha1=${hexMac("gh", body)}` }), options), { ok: false, reason: "malformed_credentials" });
  assert.equal(verifyProvider("github", inbound({ "x-hub-signature-256": `sha256=${hexMac("nope", body)}` }), options), { ok: false, reason: "invalid_credentials" });
  assert.equal(verifyProvider("github", inbound({}), options), { ok: false, reason: "missing_credentials" });
});

presets("gitea: bare hex over the body; github's header is not enough", () => {
  const options = { ...HMAC_AUTH, secrets: [{ value: "gt" }] };
  assert.equal(verifyProvider("gitea", inbound({ "x-gitea-signature": hexMac("gt", body) }), options), { ok: true });
  assert.equal(verifyProvider("gitea", inbound({ "x-hub-signature-256": `sha256=${hexMac("gt", body)}` }), options), { ok: false, reason: "missing_credentials" });
  assert.equal(verifyProvider("gitea", inbound({ "x-gitea-signature": hexMac("gt", "other") }), options), { ok: false, reason: "invalid_credentials" });
});

presets("stripe: any of several v1 signatures passes", () => {
  const options = { ...HMAC_AUTH, secrets: [{ value: "whsec_stripe" }] };
  const t = nowSeconds - 10;
  const good = hexMac("whsec_stripe", `${t}.${body}`);
  const other = hexMac("old-secret", `${t}.${body}`);
  assert.equal(verifyProvider("stripe", inbound({ "stripe-signature": `t=${t},v1=${good}` }), options), { ok: true });
  assert.equal(verifyProvider("stripe", inbound({ "stripe-signature": `t=${t},v1=${other},v1=${good},v0=abc` }), options), { ok: true });
  assert.equal(verifyProvider("stripe", inbound({ "stripe-signature": `t=${t},v1=${other}` }), options), { ok: false, reason: "invalid_credentials" });
});

presets("stripe: expired, future and malformed headers are refused", () => {
  const options = { ...HMAC_AUTH, secrets: [{ value: "k" }] };
  const at = (t: number) => ({ "stripe-signature": `t=${t},v1=${hexMac("k", `${t}.${body}`)}` });
  assert.equal(verifyProvider("stripe", inbound(at(nowSeconds - 301)), options), { ok: false, reason: "timestamp_out_of_tolerance" });
  assert.equal(verifyProvider("stripe", inbound(at(nowSeconds + 301)), options), { ok: false, reason: "timestamp_out_of_tolerance" });
  for (const header of ["v1=abc", `t=${nowSeconds}`, `t=soon,v1=${hexMac("k", "x")}`, "garbage"]) {
    assert.equal(verifyProvider("stripe", inbound({ "stripe-signature": header }), options), { ok: false, reason: "malformed_credentials" }, header);
  }
});

presets("cituro: t in milliseconds, s=<hex> over <t>.<body>", () => {
  const options = { ...HMAC_AUTH, secrets: [{ value: "ci" }] };
  const t = nowMs - 5_000;
  assert.equal(verifyProvider("cituro", inbound({ "x-cituro-signature": `t=${t},s=${hexMac("ci", `${t}.${body}`)}` }), options), { ok: true });
  const stale = nowMs - 301_000;
  assert.equal(verifyProvider("cituro", inbound({ "x-cituro-signature": `t=${stale},s=${hexMac("ci", `${stale}.${body}`)}` }), options), {
    ok: false,
    reason: "timestamp_out_of_tolerance",
  });
  assert.equal(verifyProvider("cituro", inbound({ "x-cituro-signature": `t=${t},v1=${hexMac("ci", `${t}.${body}`)}` }), options), {
    ok: false,
    reason: "malformed_credentials",
  });
});

presets("standard_webhooks: v1,<base64> entries with a whsec_ secret", () => {
  const key = Buffer.from("0123456789abcdef0123456789abcdef");
  const secret = `whsec_${key.toString("base64")}`;
  const id = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
  const sign = (k: Buffer, t: number) => createHmac("sha256", k).update(`${id}.${t}.${body}`).digest("base64");
  const headers = (signature: string, t = nowSeconds) => ({ "webhook-id": id, "webhook-timestamp": String(t), "webhook-signature": signature });
  const options = { ...HMAC_AUTH, secrets: [{ value: secret }] };
  assert.equal(verifyProvider("standard_webhooks", inbound(headers(`v1,${sign(key, nowSeconds)}`)), options), { ok: true });
  // The secret without its prefix works too; several entries, any may match.
  const bare = { ...HMAC_AUTH, secrets: [{ value: key.toString("base64") }] };
  const otherKey = Buffer.alloc(32, 1);
  assert.equal(verifyProvider("standard_webhooks", inbound(headers(`v1,${sign(otherKey, nowSeconds)} v1,${sign(key, nowSeconds)}`)), bare), { ok: true });
  assert.equal(verifyProvider("standard_webhooks", inbound(headers(`v1,${sign(otherKey, nowSeconds)}`)), options), { ok: false, reason: "invalid_credentials" });
  assert.equal(verifyProvider("standard_webhooks", inbound(headers(`v1a,${sign(key, nowSeconds)}`)), options), { ok: false, reason: "malformed_credentials" });
  const stale = nowSeconds - 400;
  assert.equal(verifyProvider("standard_webhooks", inbound(headers(`v1,${sign(key, stale)}`, stale)), options), {
    ok: false,
    reason: "timestamp_out_of_tolerance",
  });
  assert.equal(verifyProvider("standard_webhooks", inbound({ "webhook-id": id }), options), { ok: false, reason: "missing_credentials" });
});

presets("standard_webhooks: a secret that is empty or not base64 after whsec_ verifies nothing", () => {
  const id = "msg_empty_key";
  const headers = (signature: string) => ({ "webhook-id": id, "webhook-timestamp": String(nowSeconds), "webhook-signature": signature });
  // The signature anyone can make: HMAC with an empty key (what `whsec_` alone decodes to).
  const emptyKeySignature = createHmac("sha256", Buffer.alloc(0)).update(`${id}.${nowSeconds}.${body}`).digest("base64");
  // `whsec_A` is base64-shaped but decodes to no bytes at all; `whsec_AAAAA` has a stray character.
  for (const value of ["whsec_", "", "whsec_!!!notb64", "whsec_A", "whsec_A=", "B", "whsec_AAAAA"]) {
    const options = { ...HMAC_AUTH, secrets: [{ value }] };
    assert.equal(verifyProvider("standard_webhooks", inbound(headers(`v1,${emptyKeySignature}`)), options), { ok: false, reason: "no_secret_valid" }, value);
  }
  // A broken secret beside a good one leaves the good one working.
  const key = Buffer.alloc(24, 7);
  const good = createHmac("sha256", key).update(`${id}.${nowSeconds}.${body}`).digest("base64");
  const mixed = { ...HMAC_AUTH, secrets: [{ value: "whsec_" }, { value: `whsec_${key.toString("base64")}` }] };
  assert.equal(verifyProvider("standard_webhooks", inbound(headers(`v1,${emptyKeySignature}`)), mixed), { ok: false, reason: "invalid_credentials" });
  assert.equal(verifyProvider("standard_webhooks", inbound(headers(`v1,${good}`)), mixed), { ok: true });
});

presets("preset rotation uses the secret valid at the signature's time", () => {
  const t = nowSeconds - 10;
  const secrets = [
    { value: "old", validUntilMs: nowMs - 20_000 },
    { value: "new", validFromMs: nowMs - 20_000 },
  ];
  assert.equal(verifyProvider("stripe", inbound({ "stripe-signature": `t=${t},v1=${hexMac("new", `${t}.${body}`)}` }), { ...HMAC_AUTH, secrets }), { ok: true });
  assert.equal(verifyProvider("stripe", inbound({ "stripe-signature": `t=${t},v1=${hexMac("old", `${t}.${body}`)}` }), { ...HMAC_AUTH, secrets }), {
    ok: false,
    reason: "invalid_credentials",
  });
});

// ---------------------------------------------------------------------------------------------
const forward = suite("forward auth");

interface Seen {
  method?: string;
  headers?: IncomingMessage["headers"];
  body?: string;
}

async function authServer(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; server: Server; seen: Seen }> {
  const seen: Seen = {};
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      seen.method = req.method;
      seen.headers = req.headers;
      seen.body = Buffer.concat(chunks).toString();
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/check`, server, seen };
}

const forwardRequest = { method: "POST", path: "/hooks/in", headers: { authorization: "Bearer caller", "x-custom": "1", host: "spool" }, body };
const forwardOptions = { timeoutMs: 2_000, copyHeaders: ["X-Tenant", "X-Missing"], bodyLimitBytes: 5 };

forward("2xx allows and copies only the named headers; the service sees method, path, headers and a body prefix", async () => {
  const { url, server, seen } = await authServer((_req, res) => {
    res.setHeader("X-Tenant", "acme");
    res.setHeader("X-Other", "not copied");
    res.end("ok");
  });
  try {
    const result = await forwardAuth(url, forwardOptions, forwardRequest);
    assert.equal(result, { ok: true, copiedHeaders: { "X-Tenant": "acme" } });
    assert.is(seen.method, "POST");
    assert.is(seen.headers?.["x-spool-original-path"], "/hooks/in");
    assert.is(seen.headers?.["x-custom"], "1");
    assert.is(seen.headers?.authorization, "Bearer caller");
    assert.is(seen.body, body.subarray(0, 5).toString());
  } finally {
    server.close();
  }
});

forward("401 and 403 deny with that status; 500 and other statuses fail closed with 503", async () => {
  let status = 401;
  const { url, server } = await authServer((_req, res) => {
    res.statusCode = status;
    res.end();
  });
  try {
    assert.equal(await forwardAuth(url, forwardOptions, forwardRequest), { ok: false, status: 401, reason: "denied" });
    status = 403;
    assert.equal(await forwardAuth(url, forwardOptions, forwardRequest), { ok: false, status: 403, reason: "forbidden" });
    for (status of [500, 302, 404]) {
      assert.equal(await forwardAuth(url, forwardOptions, forwardRequest), { ok: false, status: 503, reason: "unavailable", detail: `the auth service answered ${status}` }, String(status));
    }
  } finally {
    server.close();
  }
});

forward("a service that does not answer in time, or is down, fails closed with 503", async () => {
  const { url, server } = await authServer(() => {
    /* never answers */
  });
  try {
    const late = await forwardAuth(url, { ...forwardOptions, timeoutMs: 100 }, forwardRequest);
    assert.equal([late.ok, !late.ok && late.status, !late.ok && late.reason], [false, 503, "unavailable"]);
    assert.match((late as { detail: string }).detail, /abort|timeout/i, "the cause is kept for the runtime log");
  } finally {
    server.closeAllConnections();
    server.close();
  }
  const down = await forwardAuth(url, forwardOptions, forwardRequest);
  assert.equal([down.ok, !down.ok && down.status, !down.ok && down.reason], [false, 503, "unavailable"]);
});

const dispatch = suite("ingress auth dispatch");

dispatch("each auth kind is verified and refusals map to catalogue errors", async () => {
  assert.equal(await authenticateIngress({ kind: "none" }, inbound({})), { ok: true });
  assert.equal(await authenticateIngress({ kind: "token", tokens: ["t"] }, inbound({ authorization: "Bearer t" })), { ok: true });
  const refused = await authenticateIngress({ kind: "token", tokens: ["t"] }, inbound({ authorization: "Bearer x" }));
  assert.equal(refused, { ok: false, status: 401, reason: "invalid_credentials", challenge: 'Bearer realm="spool"' });
  if (refused.ok) return;
  const error = ingressAuthError(refused);
  assert.is(error.status, 401);
  assert.is(error.code, "unauthorized");
  assert.equal(error.headers, { "WWW-Authenticate": 'Bearer realm="spool"' });
  assert.equal(await authenticateIngress({ kind: "basic", credentials: basicPairs }, inbound(basic("alice", "a-secret"))), { ok: true });
  const hmac = await authenticateIngress({ kind: "hmac", options: { ...HMAC_AUTH, secrets: [{ value: "s3cret" }] } }, inbound(signGeneric("s3cret", nowSeconds)));
  assert.equal(hmac, { ok: true, replay: { keys: ["nonce:nonce-1", `mac:${signGeneric("s3cret", nowSeconds)["x-signature"]}`], expiresAtMs: nowMs + 300_000 } });
  const gh = await authenticateIngress(
    { kind: "provider", provider: "github", options: { ...HMAC_AUTH, secrets: [{ value: "gh" }] } },
    inbound({ "x-hub-signature-256": `sha256=${hexMac("gh", body)}` }),
  );
  assert.equal(gh, { ok: true });
  assert.is(ingressAuthError({ ok: false, status: 403, reason: "forbidden" }).status, 403);
  const unavailable = ingressAuthError({ ok: false, status: 503, reason: "unavailable" });
  assert.is(unavailable.status, 503);
  assert.is(unavailable.code, "auth_unavailable");
  assert.ok(unavailable.headers["Retry-After"]);
});

dispatch("only forward auth answers with a promise; the other kinds decide at once", async () => {
  const decided = [
    authenticateIngress({ kind: "none" }, inbound({})),
    authenticateIngress({ kind: "token", tokens: ["t"] }, inbound({ authorization: "Bearer x" })),
    authenticateIngress({ kind: "basic", credentials: basicPairs }, inbound(basic("alice", "a-secret"))),
  ];
  for (const outcome of decided) assert.not.instance(outcome, Promise);
  assert.equal(decided[1], { ok: false, status: 401, reason: "invalid_credentials", challenge: 'Bearer realm="spool"' });
  const { url, server } = await authServer((_req, res) => res.end());
  try {
    const pending = authenticateIngress({ kind: "forward", url, options: forwardOptions }, inbound({}));
    assert.instance(pending, Promise);
    assert.equal(await pending, { ok: true, copiedHeaders: {} });
  } finally {
    server.close();
  }
});

dispatch("forward auth through the dispatcher returns the copied headers", async () => {
  const { url, server } = await authServer((_req, res) => {
    res.setHeader("X-Tenant", "acme");
    res.end();
  });
  try {
    const outcome = await authenticateIngress({ kind: "forward", url, options: forwardOptions }, inbound({}));
    assert.equal(outcome, { ok: true, copiedHeaders: { "X-Tenant": "acme" } });
  } finally {
    server.close();
  }
});

tokens.run();
dispatch.run();

const runtime = suite("runtime secret versions");

// A pool whose one version is valid from 60 s after nowMs (docs/secrets.md "Verification").
const pools = { versionsOf: (pool: string) => (pool === "partner" ? [{ value: Buffer.from("rotated"), validFromMs: nowMs + 60_000 }] : []) };

runtime("generic hmac judges a version's window at X-Timestamp; presets at the receipt time", async () => {
  const generic: IngressAuth = { kind: "hmac", options: { ...HMAC_AUTH, secrets: [{ value: "static" }] }, runtimePools: ["partner"] };
  const verdict = async (auth: IngressAuth, headers: RequestHeaders, at = nowMs) => (await authenticateIngress(withRuntimeVersions(auth, pools, at), inbound(headers, { nowMs: at }))).ok;
  // Signed at +120 s (inside the tolerance), when the version is valid: accepted even though it is not valid yet at receipt.
  assert.is(await verdict(generic, signGeneric("rotated", nowSeconds + 120)), true);
  assert.is(await verdict(generic, signGeneric("rotated", nowSeconds)), false);
  assert.is(await verdict(generic, signGeneric("static", nowSeconds)), true, "the route's static secret is still tried");
  const stripe: IngressAuth = { kind: "provider", provider: "stripe", options: { secrets: [], toleranceMs: 300_000 }, runtimePools: ["partner"] };
  const stripeHeaders = (t: number) => ({ "stripe-signature": `t=${t},v1=${hexMac("rotated", `${t}.${body}`)}` });
  assert.is(await verdict(stripe, stripeHeaders(nowSeconds + 120)), false, "the receipt time is before the version's not_before");
  assert.is(await verdict(stripe, stripeHeaders(nowSeconds + 120), nowMs + 60_000), true);
  // No pool named, or no versions: the auth is used as it is.
  const plain: IngressAuth = { kind: "hmac", options: { ...HMAC_AUTH, secrets: [{ value: "static" }] } };
  assert.is(withRuntimeVersions(plain, pools, nowMs), plain);
  assert.is(withRuntimeVersions({ ...generic, runtimePools: ["empty"] }, pools, nowMs).kind, "hmac");
});

runtime.run();
generic.run();
replay.run();
presets.run();
forward.run();
