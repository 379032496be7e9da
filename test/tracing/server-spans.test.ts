// SERVER spans on a real node:http listener (runtime/http/server.ts) wrapped as the app wraps each
// mount: status rules (5xx is ERROR with error.type, 4xx is not), a client gone before any answer,
// an incoming sampled flag of 00 (not recorded, propagated), an invalid traceparent (a new trace), and
// the traceparent a request stores for its message.
import { request } from "node:http";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile } from "../../compiler/index.js";
import { apiError } from "../../runtime/errors.js";
import { createHttpServer, type HttpListener } from "../../runtime/http/server.js";
import { sendJson } from "../../runtime/http/respond.js";
import { requestTraceContext, setRequestRoute, startTracing, type Tracing } from "../../runtime/tracing/tracing.js";
import { eventually } from "../app/helpers/http.js";
import { attr, KIND, startCollector, type Collector } from "./helpers/collector.js";

const test = suite("tracing: server spans");
let collector: Collector;
let tracing: Tracing;
let listener: HttpListener;
const stored: Record<string, Record<string, string> | undefined> = {};
let hangClosed = false;

test.before(async () => {
  collector = await startCollector();
  const config = compileSpoolfile(`observability { tracing { enabled on; collector "${collector.url()}"; insecure on } }\n`, "t.spool", { env: {} }).config!;
  tracing = startTracing(config.observability.tracing, { version: "t", onInitFailure: () => {}, onExportFailure: () => {}, onDropped: () => {} });
  const handler = tracing.traceMount("admin", "/admin", async (req, res, path) => {
    stored[path] = requestTraceContext(req);
    if (path === "/boom") throw new Error("unexpected");
    if (path === "/busy") throw apiError("store_unavailable", "the store is down");
    // The span's own close listener was added first, so once this one runs the span has ended.
    if (path === "/hang") return new Promise<void>((resolve) => res.once("close", () => ((hangClosed = true), resolve())));
    if (path.startsWith("/items/")) setRequestRoute(req, "/items/{id}");
    sendJson(res, path === "/missing" ? 404 : 200, {});
  });
  listener = await createHttpServer((req, res) => handler(req, res, (req.url ?? "/").replace(/^\/admin/, "").split("?")[0]), {
    headersTimeoutMs: 5_000,
    requestTimeoutMs: 10_000,
    keepAliveTimeoutMs: 1_000,
    maxHeaderSize: 16 * 1024,
  }).listen("127.0.0.1:0");
});

test.after(async () => {
  await listener.close(0);
  await collector.close();
});

const base = () => `http://127.0.0.1:${listener.address.port}/admin`;

test("status rules, route templates, a gone client, sampled and unsampled parents", async () => {
  assert.is((await fetch(`${base()}/items/42?x=1`)).status, 200);
  assert.is((await fetch(`${base()}/missing`)).status, 404);
  assert.is((await fetch(`${base()}/boom`)).status, 500);
  assert.is((await fetch(`${base()}/busy`)).status, 503);
  assert.is((await fetch(`${base()}/unsampled`, { headers: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00" } })).status, 200);
  assert.is((await fetch(`${base()}/garbled`, { headers: { traceparent: "00-zzzz-b7ad6b7169203331-01" } })).status, 200);
  // A client that leaves before any answer.
  await new Promise<void>((resolve) => {
    const req = request(`${base()}/hang`, { method: "GET" });
    req.on("error", () => resolve());
    req.end();
    setTimeout(() => {
      req.destroy();
      resolve();
    }, 100);
  });
  await eventually(() => (hangClosed ? true : undefined), 5_000, "the held request's close");
  await tracing.shutdown(5_000);
  const spans = collector.spans();
  const byPath = (path: string) => spans.find((s) => attr(s, "url.path") === `/admin${path}`);
  for (const span of spans) {
    assert.is(span.name, "admin_api");
    assert.is(span.kind, KIND.SERVER);
  }
  const item = byPath("/items/42")!;
  assert.is(attr(item, "http.route"), "/admin/items/{id}");
  assert.is(attr(item, "http.response.status_code"), 200);
  assert.is(item.status.code, 0);
  assert.is(item.parentSpanId, undefined);
  assert.equal([attr(byPath("/missing")!, "http.response.status_code"), byPath("/missing")!.status.code, attr(byPath("/missing")!, "error.type")], [404, 0, undefined]);
  assert.equal([attr(byPath("/boom")!, "http.response.status_code"), byPath("/boom")!.status.code, attr(byPath("/boom")!, "error.type")], [500, 2, "500"]);
  assert.equal([attr(byPath("/busy")!, "http.response.status_code"), byPath("/busy")!.status.code, attr(byPath("/busy")!, "error.type")], [503, 2, "503"]);
  assert.is(attr(byPath("/hang")!, "error.type"), "client_closed");
  assert.is(attr(byPath("/hang")!, "http.response.status_code"), undefined);
  assert.is(byPath("/unsampled"), undefined, "a sampled flag of 00 is not recorded");
  assert.match(stored["/unsampled"]!.traceparent, /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/, "but propagated");
  const garbled = byPath("/garbled")!;
  assert.is(garbled.parentSpanId, undefined, "an invalid traceparent starts a trace");
  assert.is(stored["/garbled"]!.traceparent, `00-${garbled.traceId}-${garbled.spanId}-01`);
});

test.run();
