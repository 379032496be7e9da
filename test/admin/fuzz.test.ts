import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildConfig, deliverRoute, pullRoute } from "./ir-builder.js";
import { b64, message, startHarness, type Harness } from "./harness.js";

// Seeded so a failure replays: SPOOL_FUZZ_SEED=<n> reruns one case set.
const SEED = Number(process.env.SPOOL_FUZZ_SEED ?? 20_300_101);
const REQUESTS = 1500;

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PATHS = [
  "/messages", "/messages/publish", "/messages/cancel", "/messages/requeue", "/messages/resume",
  "/messages/cancel_by_filter", "/messages/requeue_by_filter", "/messages/resume_by_filter",
  "/dlq", "/dlq/requeue", "/dlq/delete", "/attempts",
  "/backlog/top_queued", "/backlog/oldest_queued", "/backlog/aging_summary", "/backlog/trends",
  "/management/model", "/applications", "/applications/shop/endpoints", "/applications/shop/endpoints/billing",
  "/applications/shop/endpoints/billing/messages", "/applications/shop/endpoints/billing/messages/publish",
  "/applications/shop/endpoints/billing/messages/cancel_by_filter", "/applications/%E0%A4%A/endpoints/x",
  "/applications/a%2Fb/endpoints/c/messages", "/applications/shop/endpoints/nope/messages/resume_by_filter",
];
const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"];
const KEYS = ["route", "application", "endpoint_name", "target", "state", "limit", "before", "include_payload", "include_headers",
  "include_trace", "event_id", "outcome", "states", "window", "step", "until", "ids", "items", "preview_only", "payload_b64", "headers", "id", "x"];
const ODD_STRINGS = ["", "/", "/orders", "orders", "0", "-1", "1001", "1e3", "999999999999999999999", "NaN", "true", "queued,dead",
  "2030-01-01T00:00:00Z", "2030-02-30T00:00:00Z", "9999-99-99", "168h", "169h", "1m", "59s", "\u0000", "\r\n", "%", "%zz",
  "🙂", "a".repeat(600), "__proto__", "constructor", "QUJD", "not base64", "pull"];

function pick<T>(random: () => number, values: readonly T[]): T {
  return values[Math.floor(random() * values.length)];
}

function randomValue(random: () => number, depth = 0): unknown {
  const kind = Math.floor(random() * (depth > 2 ? 5 : 8));
  switch (kind) {
    case 0: return pick(random, ODD_STRINGS);
    case 1: return Math.floor(random() * 3000) - 1000;
    case 2: return random() < 0.5;
    case 3: return null;
    case 4: return random() * 1e6;
    case 5: return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
    default: {
      const out: Record<string, unknown> = {};
      for (let i = Math.floor(random() * 4); i > 0; i--) out[pick(random, KEYS)] = randomValue(random, depth + 1);
      return out;
    }
  }
}

/** Mostly-valid bodies with one field broken, plus raw garbage, so deep validation paths run too. */
function randomBody(random: () => number): string | undefined {
  const roll = random();
  if (roll < 0.1) return undefined;
  if (roll < 0.2) return pick(random, ["{", "{}{}", "[]", "null", '{"ids":["a"]} x', "\u0000", '{"items":[{"id":"a","route":"/orders","payload_b64":"QUJD"}]}']);
  const base: Record<string, unknown> = pick(random, [
    { ids: ["a", "b"] },
    { items: [{ id: `f${Math.floor(random() * 50)}`, route: "/orders", payload_b64: b64("x"), headers: { "X-A": "1" } }] },
    { items: [{ id: `g${Math.floor(random() * 50)}`, payload_b64: b64("x") }] },
    { route: "/orders", state: "queued", limit: 10, preview_only: true },
    { application: "shop", endpoint_name: "billing", preview_only: false },
    { route: "/spare" },
  ]);
  if (random() < 0.7) {
    const key = random() < 0.5 ? pick(random, Object.keys(base)) : pick(random, KEYS);
    base[key] = randomValue(random);
  }
  return JSON.stringify(base);
}

function randomQuery(random: () => number): string {
  const parts: string[] = [];
  for (let i = Math.floor(random() * 4); i > 0; i--) {
    const value = pick(random, ODD_STRINGS);
    const encoded = random() < 0.8 ? encodeURIComponent(value) : value.replace(/[\r\n\u0000 #]/g, "");
    parts.push(`${pick(random, KEYS)}=${encoded}`);
  }
  return parts.length ? `?${parts.join("&")}` : "";
}

const fuzz = suite<{ h: Harness }>("admin fuzz");
fuzz.before(async (context) => {
  const config = buildConfig([pullRoute("/orders"), pullRoute("/spare"), deliverRoute("/push", ["https://a.example/in"]), pullRoute("/billing", { application: "shop", endpointName: "billing" })]);
  context.h = await startHarness({ config });
  await context.h.seed([message("a", "/orders"), message("b", "/billing")]);
});
fuzz.after(async ({ h }) => h.close());

fuzz(`${REQUESTS} random requests (seed ${SEED}) never answer 5xx and always answer a coded error`, async ({ h }) => {
  const random = mulberry32(SEED);
  for (let i = 0; i < REQUESTS; i++) {
    const method = pick(random, METHODS);
    const path = pick(random, PATHS) + randomQuery(random);
    const body = method === "GET" || method === "HEAD" ? undefined : randomBody(random);
    const headers: Record<string, string> = {};
    if (random() < 0.85) headers["X-Spool-Audit-Reason"] = pick(random, ["fuzz", "r".repeat(513), " ", "x"]);
    if (random() < 0.2) headers["X-Spool-Audit-Actor"] = pick(random, ["ops", "", "a".repeat(300)]);
    const response = await fetch(h.baseUrl + path, { method, headers, body });
    const text = await response.text();
    const label = `#${i} ${method} ${path} ${body?.slice(0, 120)}`;
    assert.ok(response.status < 500, `${label} → ${response.status} ${text.slice(0, 200)}`);
    if (response.status >= 400 && method !== "HEAD") {
      const parsed = JSON.parse(text);
      assert.type(parsed.code, "string", label);
      assert.type(parsed.detail, "string", label);
    }
  }
  assert.equal(h.unexpected, []);
});

fuzz.run();
