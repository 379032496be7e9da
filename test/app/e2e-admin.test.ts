// The Admin API of the built `spool run` (SQLite in a temp dir) over real HTTP on 127.0.0.1: every
// endpoint's success shape, each code of the error catalogue (docs/api.md) that a Spoolfile can
// provoke, filter preview vs execute, atomic publish batches, management PUT/DELETE rewriting the
// Spoolfile (comments kept, `spool config validate` clean, byte-identical when refused), and one
// audit line per mutation read from the process output.
//
// Three processes: "main" (defaults), "policy" (publish_policy with actor and request-id rules,
// managed publish off, deliver routes closed to publish, max_depth 1 with adaptive backpressure)
// and "closed" (direct publish off, pull routes closed to publish).
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { repoPath } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { adminClient, auditLines, b64, expectedInputHash, type AdminClient, type AdminReply, type AuditLine } from "./helpers/admin-e2e.js";
import {
  adminRoutes,
  adminRun,
  backlogEndpoints,
  filterPreviewThenExecute,
  lifecycleByIdsAndDlq,
  publishBatches,
  pushDeadLetter,
  startRefusingReceiver,
  type AdminRun,
} from "./helpers/admin-scenarios.js";
import { call, eventually, pullCall, type Reply } from "./helpers/http.js";
import { CLI, freePort, spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "./helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile, type Ports } from "./helpers/spoolfile.js";

const temp = makeTempDir("e2e-admin");
const test = suite("spool run: Admin API end to end");

let receiver: Awaited<ReturnType<typeof startRefusingReceiver>>;
let main: AdminRun;
let mainPorts: Ports;
let mainConfigPath: string;
let policy: { proc: SpoolProcess; base: ReturnType<typeof urls>; admin: AdminClient };
let closed: { proc: SpoolProcess; base: ReturnType<typeof urls>; admin: AdminClient };

async function mainBody(pushTarget: string): Promise<string> {
  const closedPort = await freePort();
  return `${adminRoutes(pushTarget)}
# Free for management PUTs; this comment must survive them.
/hooks/spare {
  # spare keeps its comment
  pull { path /spare }
}

/hooks/spare-reload {
  pull { path /spare-reload }
}

/hooks/closed {
  publish off
  pull { path /closed }
}

/hooks/small {
  max_body 16b
  max_headers 32b
  pull { path /small }
}

/hooks/fanout {
  deliver "${pushTarget}/one"
  deliver "${pushTarget}/two"
}

# Pulled and dead-lettered by the health details test.
/hooks/jobs {
  pull { path /jobs }
}

/hooks/tokened {
  pull {
    path /tokened
    auth token raw:other-token
  }
}

/hooks/limited {
  rate_limit { rps 0.01; burst 1 }
  pull { path /limited }
}

/hooks/guarded {
  auth forward "http://127.0.0.1:${closedPort}/auth" { timeout 1s }
  pull { path /guarded }
}
`;
}

const POLICY_BODY = `defaults {
  egress {
    https_only off
    dns_rebind_protection off
  }
  publish_policy {
    managed off
    allow_deliver_routes off
    require_actor on
    require_request_id on
    actor_allow "alice"
    actor_prefix "svc-"
  }
  adaptive_backpressure {
    enabled on
    min_total 1
    queued_percent 100
  }
}
queue_limits { max_depth 1 }

/hooks/p {
  pull { path /p }
}

/hooks/d {
  deliver "http://127.0.0.1:9/never" { timeout 1s }
}

/hooks/m {
  application "b"
  endpoint_name "m"
  pull { path /m }
}
`;

const CLOSED_BODY = `defaults {
  publish_policy {
    direct off
    allow_pull_routes off
  }
}

/hooks/p {
  pull { path /p }
}

/hooks/m {
  application "c"
  endpoint_name "m"
  pull { path /m }
}
`;

// Every process spawned, healthy or not, so `after` stops them all even when `before` failed.
const spawned: SpoolProcess[] = [];

function spawnWith(name: string, body: string, ports: Ports): { proc: SpoolProcess; base: ReturnType<typeof urls>; path: string } {
  const path = writeSpoolfile(temp.path, spoolfileText(ports, body), `Spoolfile.${name}`);
  const proc = spawnSpool(["run", "--config", path, "--db", join(temp.path, `${name}.db`)]);
  spawned.push(proc);
  return { proc, base: urls(ports), path };
}

test.before(async () => {
  try {
    receiver = await startRefusingReceiver();
    mainPorts = await freePorts();
    const m = spawnWith("main", await mainBody(receiver.url), mainPorts);
    const p = spawnWith("policy", POLICY_BODY, await freePorts());
    const c = spawnWith("closed", CLOSED_BODY, await freePorts());
    // Three processes start at once on a shared machine: allow more than one process's 15 s.
    await Promise.all([m, p, c].map((x) => waitHealthy(x.proc, x.base.admin, 45_000)));
    main = adminRun(m.proc, m.base, receiver.url);
    mainConfigPath = m.path;
    policy = { proc: p.proc, base: p.base, admin: adminClient(p.base.admin) };
    closed = { proc: c.proc, base: c.base, admin: adminClient(c.base.admin) };
  } catch (error) {
    // uvu does not print a failing `before`; the error carries the process output.
    console.error(error);
    throw error;
  }
});

test.after(async () => {
  await Promise.all(spawned.map((p) => stopSpool(p)));
  receiver?.close();
  temp.cleanup();
});

test("/healthz needs no token; ?details=1 does, and counts dead letters by reason (Pull nack dead, push 400)", async () => {
  const bare = await call(`${main.urls.admin}/healthz`, { method: "GET" });
  assert.equal([bare.status, bare.json], [200, { ok: true }]);
  const anonymous = await call(`${main.urls.admin}/healthz?details=1`, { method: "GET" });
  assert.equal([anonymous.status, anonymous.json.code, anonymous.headers.get("www-authenticate")], [401, "unauthorized", 'Bearer realm="spool"']);
  // The first trend sample is taken at start: no sampling_stale alarm for the first capture interval (1 min).
  const signals = await eventually(async () => {
    const view = (await main.admin("/healthz?details=1")).json.diagnostics.queue.trend_signals;
    return view.signals.length > 0 || view.operator_actions.length > 0 ? undefined : view;
  }, 3_000, "trend signals without sampling_stale after start");
  assert.equal(signals.signals, []);

  for (const body of ["first", "second"]) assert.is((await call(`${main.urls.ingress}/hooks/jobs`, { body })).status, 202);
  const { items } = (await pullCall(`${main.urls.pull}/jobs`, "dequeue", "pull-token", { batch: 2 })).json;
  assert.is(items.length, 2);
  assert.is((await pullCall(`${main.urls.pull}/jobs`, "nack", "pull-token", { lease_id: items[0].lease_id, dead: true, reason: "poison pill" })).status, 204);
  assert.is((await pullCall(`${main.urls.pull}/jobs`, "nack", "pull-token", { lease_id: items[1].lease_id, dead: true })).status, 204);
  await pushDeadLetter(main);

  const details = await eventually(async () => {
    const reply = await main.admin("/healthz?details=1");
    return reply.json.diagnostics.queue.by_state.dead === 3 ? reply : undefined;
  }, 5_000, "health details with three dead letters");
  assert.is(details.status, 200);
  assert.equal(Object.keys(details.json).sort(), ["diagnostics", "ok", "time"]);
  assert.equal(Object.keys(details.json.diagnostics).sort(), ["config", "delivery", "ingress", "queue", "tracing"]);
  assert.equal(details.json.diagnostics.delivery.dead_by_reason, { max_retries: 0, no_retry: 1, policy_denied: 0, unspecified: 1, other: 1 });
  assert.equal([details.json.diagnostics.delivery.dead_total, details.json.diagnostics.delivery.attempts_total], [3, 1]);
  const metrics = await (await fetch(main.urls.metrics)).text();
  assert.match(metrics, /^spool_delivery_dead_by_reason_total\{reason="no_retry"\} 1$/m);
  assert.match(metrics, /^spool_delivery_dead_by_reason_total\{reason="other"\} 1$/m);
  assert.match(metrics, /^spool_delivery_dead_by_reason_total\{reason="unspecified"\} 1$/m);

  const dead = await main.admin("/messages?route=/hooks/jobs&state=dead&include_payload=1&include_headers=1&include_trace=1");
  assert.is(dead.status, 200);
  assert.equal(dead.json.items.map((i: { dead_reason?: string }) => i.dead_reason).filter(Boolean), ["poison pill"], "an unnamed nack stores no reason");
  const first = dead.json.items.find((i: { dead_reason?: string }) => i.dead_reason === "poison pill");
  assert.equal(Object.keys(first).sort(), ["attempt", "dead_reason", "headers", "id", "next_run_at", "payload_b64", "received_at", "route", "state", "target", "trace"]);
  assert.equal([first.route, first.target, first.state, Buffer.from(first.payload_b64, "base64").toString()], ["/hooks/jobs", "pull", "dead", "first"]);
  assert.is(dead.json.items.length, 2);
});

test("HEAD answers like GET without a body on the read endpoints; a 404 does not echo a long path whole", async () => {
  const token = { authorization: "Bearer admin-token" };
  const get = await call(`${main.urls.admin}/messages?limit=1`, { method: "GET", headers: token });
  const head = await call(`${main.urls.admin}/messages?limit=1`, { method: "HEAD", headers: token });
  assert.equal([head.status, head.text, head.headers.get("content-type")], [get.status, "", get.headers.get("content-type")]);
  assert.is((await call(`${main.urls.admin}/messages/cancel`, { method: "HEAD", headers: token })).headers.get("allow"), "POST");
  const long = await call(`${main.urls.admin}/${"x".repeat(50_000)}`, { method: "GET", headers: token });
  assert.is(long.status, 404);
  assert.ok(long.text.length < 400, `a ${long.text.length}-character reply`);
});

test("a mutation whose client leaves before its body has arrived is audited as client_gone, and nothing is logged as an internal error", async () => {
  const { port } = new URL(main.urls.admin);
  const socket = connect(Number(port), "127.0.0.1");
  socket.on("error", () => undefined);
  const requestId = `gone-${Date.now()}`;
  socket.write(
    `POST /messages/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer admin-token\r\nX-Spool-Audit-Reason: left midway\r\n` +
      `X-Request-ID: ${requestId}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"ids":[`,
  );
  // Once the server has the headers (the audit line needs them), the client goes away: a second
  // leaves ample time for a local request's headers even on a loaded machine.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  socket.resetAndDestroy();
  const line = await eventually(() => auditLines(main.proc.output()).find((l) => l.request_id === requestId), 5_000, "the audit line");
  assert.is(line.result, "client_gone");
  assert.is(line.tool, "messages_cancel");
  assert.not.match(main.proc.output(), /admin_unexpected_error/);
});

test("lifecycle by ids and the DLQ: requeue, delete, cancel, resume with exact counts", async () => {
  await lifecycleByIdsAndDlq(main);
});

test("filter mutations: preview counts and changes nothing, execute changes exactly limit, scoped and managed selectors", async () => {
  await filterPreviewThenExecute(main);
});

test("publish: global and endpoint-scoped; a refused batch names item_index and writes nothing", async () => {
  await publishBatches(main);
});

test("backlog: top_queued, oldest_queued, aging_summary and trends", async () => {
  await backlogEndpoints(main);
});

test("management model: GET /management/model, /applications, an application's endpoints, one endpoint", async () => {
  const orders = {
    name: "orders",
    application: "shop",
    route: "/hooks/orders",
    mode: "pull",
    targets: ["pull"],
    publish_policy: { enabled: true, direct_enabled: true, managed_enabled: true },
  };
  const model = await main.admin("/management/model");
  assert.equal([model.status, model.json], [200, { application_count: 1, path_count: 1, applications: [{ name: "shop", endpoints: [orders] }] }]);
  assert.equal((await main.admin("/applications")).json, { applications: [{ name: "shop", path_count: 1 }] });
  assert.equal((await main.admin("/applications/shop/endpoints")).json, { endpoints: [orders] });
  assert.equal((await main.admin("/applications/shop/endpoints/orders")).json, orders);
  const missing = await main.admin("/applications/shop/endpoints/nope");
  assert.equal([missing.status, missing.json.code], [404, "managed_endpoint_not_found"]);
});

test("management PUT keeps the Spoolfile's comments and `spool config validate` accepts it; refusals leave it byte-identical; DELETE undoes it", async () => {
  const original = readFileSync(mainConfigPath);
  const put = await main.admin("/applications/shop/endpoints/spare", { method: "PUT", body: { route: "/hooks/spare" } });
  assert.is(put.status, 200, put.text);
  assert.equal([put.json.applied, put.json.action, put.json.endpoint.route, put.json.endpoint.mode], [true, "created", "/hooks/spare", "pull"]);
  assert.equal(put.json.audit, { reason: "e2e", request_id: put.requestId });
  const rewritten = readFileSync(mainConfigPath, "utf8");
  for (const comment of ["# spare keeps its comment", "# Free for management PUTs; this comment must survive them.", "# Routes of the Admin API end-to-end tests."]) {
    assert.ok(rewritten.includes(comment), `kept: ${comment}`);
  }
  assert.equal(addedLines(original.toString("utf8"), rewritten), ['  application "shop"', '  endpoint_name "spare"'], "only the label statements were added");
  const validate = spawnSync(process.execPath, [CLI, "config", "validate", "--config", mainConfigPath, "--format", "json"], { encoding: "utf8" });
  assert.is(validate.status, 0, validate.stdout + validate.stderr);
  assert.equal([JSON.parse(validate.stdout).ok, JSON.parse(validate.stdout).errors], [true, []]);
  assert.is((await main.admin("/applications/shop/endpoints/spare")).status, 200, "the mapping is live when the PUT answers");
  assert.is((await main.admin("/management/model")).json.path_count, 2);
  const fingerprint = (await main.admin("/healthz?details=1")).json.diagnostics.config.fingerprint;
  assert.is(fingerprint, createHash("sha256").update(readFileSync(mainConfigPath)).digest("hex"), "health names the rewritten file");

  const afterPut = readFileSync(mainConfigPath);
  const noop = await main.admin("/applications/shop/endpoints/spare", { method: "PUT", body: { route: "/hooks/spare" } });
  assert.equal([noop.status, noop.json.applied, noop.json.action], [200, false, "noop"]);
  const published = await main.admin("/applications/shop/endpoints/spare/messages/publish", { body: { items: [{ id: "spare-1", payload_b64: b64("x") }] } });
  assert.is(published.status, 200);
  const refusals: [string, "PUT" | "DELETE", unknown, number, string][] = [
    ["/applications/shop/endpoints/x", "PUT", { route: "/hooks/nope" }, 404, "management_route_not_found"],
    ["/applications/shop/endpoints/x", "PUT", { route: "/hooks/closed" }, 409, "management_route_publish_disabled"],
    ["/applications/shop/endpoints/x", "PUT", { route: "/hooks/spare" }, 409, "management_route_already_mapped"],
    ["/applications/shop/endpoints/spare", "PUT", { route: "/hooks/push" }, 409, "management_route_target_mismatch"],
    ["/applications/shop/endpoints/spare", "PUT", { route: "hooks/spare" }, 400, "invalid_body"],
    ["/applications/shop/endpoints/spare", "DELETE", undefined, 409, "management_route_backlog_active"],
    ["/applications/shop/endpoints/nope", "DELETE", undefined, 404, "managed_endpoint_not_found"],
  ];
  for (const [path, method, body, status, code] of refusals) {
    const refused = await main.admin(path, { method, body });
    assert.equal([refused.status, refused.json.code], [status, code], `${method} ${path} ${JSON.stringify(body)}: ${refused.text}`);
    assert.ok(readFileSync(mainConfigPath).equals(afterPut), `${code} left the file byte-identical`);
  }

  const canceled = await main.admin("/applications/shop/endpoints/spare/messages/cancel_by_filter", { body: {} });
  assert.is(canceled.json.changed, 1);
  const deleted = await main.admin("/applications/shop/endpoints/spare", { method: "DELETE" });
  assert.is(deleted.status, 200, deleted.text);
  assert.equal([deleted.json.applied, deleted.json.action, deleted.json.endpoint.name, deleted.json.endpoint.route], [true, "deleted", "spare", "/hooks/spare"]);
  assert.ok(readFileSync(mainConfigPath).equals(original), "DELETE restores the original bytes");
  assert.is((await main.admin("/applications/shop/endpoints/spare")).status, 404);
});

/** Lines of `after` left over once each line of `before` has been matched once. */
function addedLines(before: string, after: string): string[] {
  const remaining = new Map<string, number>();
  for (const line of before.split("\n")) remaining.set(line, (remaining.get(line) ?? 0) + 1);
  return after.split("\n").filter((line) => {
    const left = remaining.get(line) ?? 0;
    remaining.set(line, left - 1);
    return left <= 0;
  });
}

/** Edits the served Spoolfile on disk (no --watch, so nothing reloads), PUTs a mapping and restores the file. */
async function putWithRefusedReload(edit: (text: string) => string): Promise<{ reply: AdminReply; unchanged: boolean }> {
  const original = readFileSync(mainConfigPath);
  const edited = Buffer.from(edit(original.toString("utf8")));
  writeFileSync(mainConfigPath, edited);
  try {
    const reply = await main.admin("/applications/shop/endpoints/reload", { method: "PUT", body: { route: "/hooks/spare-reload" } });
    return { reply, unchanged: readFileSync(mainConfigPath).equals(edited) };
  } finally {
    writeFileSync(mainConfigPath, original);
  }
}

const needsRestart = (text: string) => text.replace(`listen 127.0.0.1:${mainPorts.metrics}`, "listen 127.0.0.1:1");
// An unreadable secret is a warning for the label edit's own compile and an error for the reload
// (spool run compiles with strict secrets), so this one fails after the file was rewritten.
const unsetSecret = (text: string) => `${text}\n/hooks/env-ref {\n  auth token env:SPOOL_E2E_UNSET_VARIABLE\n  pull { path /env-ref }\n}\n`;

test("a PUT whose reload is refused answers management_apply_failed and leaves the Spoolfile byte-identical", async () => {
  const generation = (await main.admin("/healthz?details=1")).json.diagnostics.config.generation;
  for (const [what, edit, detail] of [["a listener change", needsRestart, /restart/], ["an unreadable secret", unsetSecret, /SPOOL_E2E_UNSET_VARIABLE/]] as const) {
    const { reply, unchanged } = await putWithRefusedReload(edit);
    assert.equal([reply.status, reply.json.code], [409, "management_apply_failed"], `${what}: ${reply.text}`);
    assert.match(reply.json.detail, detail);
    assert.ok(unchanged, `${what}: the file is byte-identical to what was on disk before the PUT`);
    const missing = await main.admin("/applications/shop/endpoints/reload");
    assert.equal([missing.status, missing.json.code], [404, "managed_endpoint_not_found"], "the old config still serves");
  }
  assert.is((await main.admin("/healthz?details=1")).json.diagnostics.config.generation, generation, "nothing was applied");
});

// Codes no Spoolfile can provoke, each with the reason; every other code in the catalogue (docs/api.md) is probed.
const NOT_REACHABLE_BY_CONFIG: Readonly<Record<string, string>> = {
  internal_error: "an unexpected failure; nothing in a Spoolfile produces one",
  queue_overload: "the Pull API's answer to a store outage, not to a configuration",
  store_unavailable: "a store outage, not a configuration",
  memory_pressure: "the memory store's guard is half the V8 heap; the Spoolfile has no knob for it",
  managed_resolver_missing: "Spool resolves managed endpoints from the compiled config, which is always there",
  expectation_failed: "a request's Expect header, not a configuration (test/runtime/http-server.test.ts)",
  shutting_down: "the close deadline of a shutdown, not a configuration (test/runtime/http-server.test.ts)",
  request_timeout: "a client that stops sending, not a configuration (test/runtime/http-server.test.ts; e2e-ingress-pull's slowloris)",
  unsupported_transfer_coding: "a request's Transfer-Encoding, not a configuration (test/runtime/http-server.test.ts)",
  secret_pool_not_found: "runtime secrets need SPOOL_SECRET_ENCRYPTION_KEY; probed in test/app/e2e-secrets.test.ts",
  secret_not_runtime: "probed in test/app/e2e-secrets.test.ts",
  secret_management_unavailable: "an app without the key (spool run refuses to start): test/app/secrets-instances.test.ts",
  secret_value_empty: "probed in test/app/e2e-secrets.test.ts",
  secret_invalid_window: "probed in test/app/e2e-secrets.test.ts",
  secret_pool_full: "probed in test/app/e2e-secrets.test.ts",
  secret_id_not_found: "probed in test/app/e2e-secrets.test.ts",
  secret_duplicate_id: "a random 64-bit id colliding in one pool; the store's duplicate_id is in test/store/contract.ts",
  secret_seal_failure: "AES-256-GCM with a valid 32-byte key does not fail to seal",
  secret_persist_failure: "a store failing mid-add: test/runtime/secrets.test.ts",
};

/** `| code | status | meaning |` rows of the "Error catalogue" table in docs/api.md. */
function documentedErrorTable(): Map<string, number> {
  const api = readFileSync(repoPath("docs/api.md"), "utf8");
  const at = api.indexOf("## Error catalogue");
  assert.ok(at >= 0, 'docs/api.md has a "## Error catalogue" section');
  const section = api.slice(at);
  const rows = new Map<string, number>();
  for (const match of section.matchAll(/^\| ([a-z0-9_]+) \| (\d{3}) \|/gm)) rows.set(match[1], Number(match[2]));
  return rows;
}

/** Sends raw bytes to a listener and parses the HTTP answer (for requests fetch refuses to send). */
function rawRequest(port: number, bytes: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    let text = "";
    socket.on("data", (chunk) => (text += chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head, body = ""] = text.split("\r\n\r\n");
      const status = Number(head.split(" ")[1]);
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      resolve({ status, headers: new Headers(), text: body, json });
    });
  });
}

test("every code of the error catalogue in docs/api.md that a Spoolfile can provoke answers with its status and {code, detail}", async () => {
  const publish = (admin: AdminClient, items: unknown[], extra = {}) => admin("/messages/publish", { body: { items }, ...extra });
  const item = (id: string, route: string, extra = {}) => ({ id, route, payload_b64: b64("x"), ...extra });
  const policyHeaders = { actor: "alice" };
  const probes: Record<string, () => Promise<Reply>> = {
    invalid_body: () => main.admin("/messages/cancel", { rawBody: "{" }),
    invalid_query: () => main.admin("/messages?limit=0"),
    bad_request: () => rawRequest(mainPorts.admin, "POST /messages/cancel HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"),
    audit_reason_required: () => main.admin("/messages/cancel", { body: { ids: ["x"] }, reason: null }),
    audit_actor_required: () => policy.admin("/messages/cancel", { body: { ids: ["x"] } }),
    audit_request_id_required: () => policy.admin("/messages/cancel", { body: { ids: ["x"] }, actor: "alice", requestId: null }),
    audit_actor_not_allowed: () => policy.admin("/messages/cancel", { body: { ids: ["x"] }, actor: "mallory" }),
    managed_selector_required: () => main.admin("/messages/cancel_by_filter", { body: { preview_only: true } }),
    scoped_publish_required: () => publish(main.admin, [item("e-1", "/hooks/orders")]),
    invalid_header: () => publish(main.admin, [item("e-2", "/hooks/pub", { headers: { "x-bad": "a\u0001b" } })]),
    target_unresolvable: () => publish(main.admin, [item("e-3", "/hooks/fanout")]),
    invalid_payload_b64: () => publish(main.admin, [item("e-4", "/hooks/pub", { payload_b64: "%%" })]),
    invalid_received_at: () => publish(main.admin, [item("e-5", "/hooks/pub", { received_at: "2024-13-01T00:00:00Z" })]),
    invalid_next_run_at: () => publish(main.admin, [item("e-6", "/hooks/pub", { next_run_at: "soon" })]),
    selector_scope_forbidden: () => main.admin("/applications/shop/endpoints/orders/messages?route=/hooks/orders"),
    managed_target_mismatch: () =>
      main.admin("/applications/shop/endpoints/orders/messages/publish", { body: { items: [{ id: "e-13", payload_b64: b64("x"), target: "https://elsewhere.example/in" }] } }),
    unauthorized: () => main.admin("/messages", { token: null }),
    forbidden: () => pullCall(`${main.urls.pull}/tokened`, "dequeue", "pull-token", {}),
    route_publish_disabled: () => publish(main.admin, [item("e-7", "/hooks/closed")]),
    global_publish_disabled: () => publish(closed.admin, [item("e-8", "/hooks/p")]),
    scoped_publish_disabled: () => policy.admin("/applications/b/endpoints/m/messages/publish", { body: { items: [{ id: "e-9", payload_b64: b64("x") }] }, ...policyHeaders }),
    pull_route_publish_disabled: () => closed.admin("/applications/c/endpoints/m/messages/publish", { body: { items: [{ id: "e-10", payload_b64: b64("x") }] } }),
    deliver_route_publish_disabled: () => publish(policy.admin, [item("e-11", "/hooks/d")], policyHeaders),
    not_found: () => main.admin("/no/such/path"),
    route_not_found: () => publish(main.admin, [item("e-12", "/hooks/nope")]),
    managed_endpoint_not_found: () => main.admin("/applications/nope/endpoints/x"),
    management_route_not_found: () => main.admin("/applications/shop/endpoints/x", { method: "PUT", body: { route: "/hooks/nope" } }),
    method_not_allowed: async () => {
      const reply = await main.admin("/messages", { method: "DELETE" });
      assert.is(reply.headers.get("allow"), "GET, HEAD");
      return reply;
    },
    lease_conflict: () => pullCall(`${main.urls.pull}/jobs`, "ack", "pull-token", { lease_id: "lease_nope" }),
    duplicate_id: async () => {
      assert.is((await publish(main.admin, [item("e-dup", "/hooks/pub")])).status, 200);
      return publish(main.admin, [item("e-dup", "/hooks/pub")]);
    },
    management_route_already_mapped: () => main.admin("/applications/shop/endpoints/x", { method: "PUT", body: { route: "/hooks/orders" } }),
    management_route_publish_disabled: () => main.admin("/applications/shop/endpoints/x", { method: "PUT", body: { route: "/hooks/closed" } }),
    management_route_target_mismatch: () => main.admin("/applications/shop/endpoints/orders", { method: "PUT", body: { route: "/hooks/push" } }),
    management_route_backlog_active: async () => {
      const queued = await main.admin("/applications/shop/endpoints/orders/messages/publish", { body: { items: [{ id: "e-backlog", payload_b64: b64("x") }] } });
      assert.is(queued.status, 200);
      return main.admin("/applications/shop/endpoints/orders", { method: "DELETE" });
    },
    management_apply_failed: async () => (await putWithRefusedReload(needsRestart)).reply,
    payload_too_large: () => publish(main.admin, [item("e-13", "/hooks/small", { payload_b64: b64("seventeen bytes!!") })]),
    headers_too_large: () => publish(main.admin, [item("e-14", "/hooks/small", { headers: { "x-long": "a".repeat(40) } })]),
    rate_limited: async () => {
      assert.is((await call(`${main.urls.ingress}/hooks/limited`, { body: "1" })).status, 202);
      return call(`${main.urls.ingress}/hooks/limited`, { body: "2" });
    },
    queue_full: async () => {
      const first = await publish(policy.admin, [item("full-1", "/hooks/p")], { actor: "svc-bot" });
      assert.is(first.status, 200, first.text);
      return publish(policy.admin, [item("full-2", "/hooks/p")], { actor: "svc-bot" });
    },
    // After queue_full: the queue holds max_depth messages, 100% of it queued.
    adaptive_backpressure: () =>
      eventually(async () => {
        const reply = await call(`${policy.base.ingress}/hooks/p`, { body: "x" });
        // Until the cached queue stats (at most 2 s old) see the full queue, ingress answers queue_full.
        return reply.json?.code === "adaptive_backpressure" ? reply : undefined;
      }, 5_000, "adaptive backpressure"),
    auth_unavailable: () => call(`${main.urls.ingress}/hooks/guarded`, { body: "x" }),
  };

  const table = documentedErrorTable();
  assert.ok(table.size >= 40, `docs/api.md catalogue parsed (${table.size} rows)`);
  const covered = new Set([...Object.keys(probes), ...Object.keys(NOT_REACHABLE_BY_CONFIG)]);
  assert.equal([...table.keys()].filter((code) => !covered.has(code)), [], "every documented code is probed or explained");
  assert.equal([...covered].filter((code) => !table.has(code)), [], "every probed code is in docs/api.md");
  assert.equal(Object.keys(probes).filter((code) => code in NOT_REACHABLE_BY_CONFIG), []);

  for (const [code, probe] of Object.entries(probes)) {
    const reply = await probe();
    assert.equal([reply.status, reply.json?.code], [table.get(code), code], `${code}: ${reply.status} ${reply.text}`);
    assert.type(reply.json.detail, "string", `${code} has a detail`);
  }
});

test("the policy process: audit headers are checked in order and the audit line names the actor", async () => {
  const accepted = await policy.admin("/messages/cancel", { body: { ids: ["nothing"] }, actor: "svc-ops" });
  assert.equal([accepted.status, accepted.json], [200, { canceled: 0, audit: { reason: "e2e", actor: "svc-ops", request_id: accepted.requestId } }]);
  const noReason = await policy.admin("/messages/cancel", { body: { ids: ["nothing"] }, reason: null });
  assert.is(noReason.json.code, "audit_reason_required", "the reason is checked before the actor");
  const notAllowed = await policy.admin("/messages/cancel", { body: { ids: ["nothing"] }, actor: "mallory", requestId: null });
  assert.is(notAllowed.json.code, "audit_actor_not_allowed", "the actor is checked before the request id");
  const line = await eventually(() => auditLines(policy.proc.output()).find((l) => l.request_id === accepted.requestId), 5_000, "the audit line");
  assert.equal([line.principal, line.actor, line.result, line.tool, line.metadata.kind], ["svc-ops", "svc-ops", "ok", "messages_cancel", "id_mutation"]);
  const refused = await eventually(() => auditLines(policy.proc.output()).find((l) => l.result === "audit_actor_not_allowed" && l.request_id === undefined), 5_000, "the refused line");
  assert.equal([refused.principal, refused.actor, refused.metadata], ["mallory", "mallory", { kind: "refused", operation: "messages_cancel" }], "a refused mutation is audited with the actor sent");
});

test("audit lines mask credentials written into the reason, as every other log line does", async () => {
  const reason = "rotating Bearer abc.def-SECRET after a leak; see postgres://ops:pw-SECRET@db/x";
  const sent = await main.admin("/messages/cancel", { body: { ids: ["nothing"] }, reason });
  assert.is(sent.status, 200);
  const line = await eventually(() => auditLines(main.proc.output()).find((l) => l.request_id === sent.requestId), 5_000, "the audit line");
  assert.is(line.reason, "rotating Bearer [redacted] after a leak; see postgres://ops:[redacted]@db/x");
  // The actor is also the line's principal: masked in both.
  const byActor = await main.admin("/messages/cancel", { body: { ids: ["nothing"] }, actor: "Bearer sk_live_SECRET" });
  const actorLine = await eventually(() => auditLines(main.proc.output()).find((l) => l.request_id === byActor.requestId), 5_000, "the actor's audit line");
  assert.equal([actorLine.principal, actorLine.actor], ["Bearer [redacted]", "Bearer [redacted]"]);
  assert.not.match(main.proc.output(), /SECRET/);
  // Ordinary words after "basic" or "bearer" are the audit trail, not credentials.
  const prose = await main.admin("/messages/cancel", { body: { ids: ["nothing"] }, reason: "basic cleanup of stale dlq items", actor: "ops bearer duty" });
  const proseLine = await eventually(() => auditLines(main.proc.output()).find((l) => l.request_id === prose.requestId), 5_000, "the prose audit line");
  assert.equal([proseLine.reason, proseLine.actor], ["basic cleanup of stale dlq items", "ops bearer duty"]);
});

test("audit: one line per mutation, for each kind, with the recomputable input_hash", async () => {
  const bulk = (await main.admin("/messages?route=/hooks/bulk")).json.items as { state: string }[];
  const cancelable = bulk.filter((i) => ["queued", "leased", "dead"].includes(i.state)).length;
  assert.ok(cancelable > 0);
  const mutations: [AdminReply, string, string, string, Record<string, unknown>][] = [];
  const record = async (reply: Promise<AdminReply>, method: string, path: string, tool: string, metadata: Record<string, unknown>) => mutations.push([await reply, method, path, tool, metadata]);
  await record(main.admin("/messages/cancel", { body: { ids: ["nope", "nope"] } }), "POST", "/messages/cancel", "messages_cancel", {
    kind: "id_mutation",
    operation: "messages_cancel",
    ids_requested: 2,
    ids_unique: 1,
    changed: 0,
  });
  await record(main.admin("/messages/cancel_by_filter", { body: { route: "/hooks/bulk", preview_only: true } }), "POST", "/messages/cancel_by_filter", "messages_cancel_by_filter", {
    kind: "filter_mutation",
    operation: "cancel_by_filter",
    matched: cancelable,
    changed: 0,
    preview_only: true,
  });
  await record(main.admin("/applications/shop/endpoints/orders", { method: "PUT", body: { route: "/hooks/orders" } }), "PUT", "/applications/shop/endpoints/orders", "management_endpoint_upsert", {
    kind: "config_mutation",
    operation: "upsert_endpoint",
    mode: "file_rewrite",
    outcome: "noop",
    application: "shop",
    endpoint_name: "orders",
    route: "/hooks/orders",
  });
  await record(main.admin("/messages/publish", { body: { items: [{ id: "audit-1", route: "/hooks/pub", payload_b64: b64("a") }] } }), "POST", "/messages/publish", "messages_publish", {
    kind: "publish",
    operation: "messages_publish",
    mode: "direct",
    items: 1,
    published: 1,
  });
  await record(main.admin("/messages/publish", { body: { items: [{ id: "audit-2", route: "/hooks/nope", payload_b64: b64("a") }] } }), "POST", "/messages/publish", "messages_publish", {
    kind: "refused",
    operation: "messages_publish",
  });

  const lines = await eventually(() => {
    const all = auditLines(main.proc.output());
    return mutations.every(([reply]) => all.some((l) => l.request_id === reply.requestId)) ? all : undefined;
  }, 5_000, "the audit lines");
  for (const [reply, method, path, tool, metadata] of mutations) {
    const mine = lines.filter((l) => l.request_id === reply.requestId);
    assert.is(mine.length, 1, `${tool} ${metadata.kind}: exactly one audit line`);
    const [line]: AuditLine[] = mine;
    assert.equal(
      [line.tool, line.result, line.role, line.principal, line.reason, line.metadata],
      [tool, reply.status === 200 ? "ok" : reply.json.code, "admin", "admin_token", "e2e", metadata],
    );
    assert.is(line.input_hash, expectedInputHash(method, path, reply.sentBody));
    assert.ok(Number.isInteger(line.duration_ms) && line.duration_ms >= 0);
    assert.ok(Math.abs(Date.parse(line.timestamp) - Date.now()) < 60_000);
  }

  // Every mutation this run sent past the token check to a mutation path: exactly one line each.
  const routerRefusals = new Set(["unauthorized", "not_found", "method_not_allowed"]);
  const audited = main.admin.mutations.filter(({ reply }) => !routerRefusals.has(reply.json?.code));
  assert.ok(audited.length >= 40, `${audited.length} mutations sent`);
  for (const { method, path, reply } of audited) {
    const mine = lines.filter((l) => l.request_id === reply.requestId);
    assert.is(mine.length, 1, `${method} ${path} (${reply.status}) has one audit line`);
    assert.is(mine[0].result, reply.status === 200 ? "ok" : reply.json.code);
  }
  for (const { reply } of main.admin.mutations.filter(({ reply }) => routerRefusals.has(reply.json?.code))) {
    assert.not.ok(lines.some((l) => l.request_id === reply.requestId), `${reply.json.code} happens before the mutation and is not audited`);
  }
});

test.run();
