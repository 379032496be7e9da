import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile } from "../../compiler/index.js";
import type { SpoolConfig } from "../../compiler/ir.js";
import { makeReadOnly } from "../helpers/read-only.js";
import { reportSkipped } from "../helpers/skip.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { message, startHarness, type Harness } from "./harness.js";

const SPOOLFILE = `# Spool config for admin tests
admin_api { listen 127.0.0.1:2019 }
pull_api { listen 127.0.0.1:9443; auth token raw:pull-secret }

/hooks/orders {
  # orders from the shop
  application "shop"
  endpoint_name "orders" # the orders endpoint
  pull { path /orders }
}

/hooks/spare {
  pull { path /spare } # unmapped pull route
}

/hooks/returns {
  application "shop"
  endpoint_name "returns"
  pull { path /returns }
}

/hooks/audit {
  application "compliance"
  endpoint_name "trail"
  publish.direct off
  deliver "https://audit.example/in" { timeout 5s }
}

/hooks/closed {
  publish { managed off }
  pull { path /closed }
}

/hooks/push {
  deliver "https://example.com/in" { timeout 5s }
}
`;

function compileOrThrow(text: string, file: string): SpoolConfig {
  const result = compileSpoolfile(text, file);
  if (!result.config) throw new Error(result.diagnostics.map((d) => d.message).join("; "));
  return result.config;
}

interface Context {
  h: Harness;
  path: string;
  reloads: number;
  refuseReload: boolean;
}

const dir = makeTempDir("admin-management");
process.on("exit", () => dir.cleanup());
let counter = 0;

const management = suite<Context>("admin management model");

management.before.each(async (context) => {
  context.path = join(dir.path, `Spoolfile-${++counter}`);
  writeFileSync(context.path, SPOOLFILE);
  context.reloads = 0;
  context.refuseReload = false;
  context.h = await startHarness({
    config: compileOrThrow(SPOOLFILE, context.path),
    configPath: context.path,
    // What the app does: compile the text and swap the config in, or refuse it.
    applyConfigText: async (text, harness) => {
      if (context.refuseReload) return { ok: false, detail: "listener change needs a restart" };
      const result = compileSpoolfile(text, context.path);
      if (!result.config) return { ok: false, detail: result.diagnostics.map((d) => d.message).join("; ") };
      harness.config = result.config;
      context.reloads++;
      return { ok: true };
    },
  });
});
management.after.each(async ({ h }) => h.close());

management("GET /management/model counts applications and labelled routes", async ({ h }) => {
  const reply = await h.request("GET", "/management/model");
  assert.is(reply.status, 200);
  assert.is(reply.body.application_count, 2);
  assert.is(reply.body.path_count, 3);
  assert.equal(reply.body.applications.map((a: any) => [a.name, a.endpoints.map((e: any) => e.name)]), [
    ["compliance", ["trail"]],
    ["shop", ["orders", "returns"]],
  ]);
  const trail = reply.body.applications[0].endpoints[0];
  assert.equal(trail, {
    name: "trail",
    application: "compliance",
    route: "/hooks/audit",
    mode: "deliver",
    targets: ["https://audit.example/in"],
    publish_policy: { enabled: true, direct_enabled: false, managed_enabled: true },
  });
});

management("GET /applications, /applications/{a}/endpoints and one endpoint; unknown names are 404", async ({ h }) => {
  const apps = await h.request("GET", "/applications");
  assert.equal(apps.body, { applications: [{ name: "compliance", path_count: 1 }, { name: "shop", path_count: 2 }] });
  const endpoints = await h.request("GET", "/applications/shop/endpoints");
  assert.equal(endpoints.body.endpoints.map((e: any) => [e.name, e.route, e.mode, e.targets]), [
    ["orders", "/hooks/orders", "pull", ["pull"]],
    ["returns", "/hooks/returns", "pull", ["pull"]],
  ]);
  const one = await h.request("GET", "/applications/shop/endpoints/orders");
  assert.equal([one.status, one.body.name, one.body.route], [200, "orders", "/hooks/orders"]);
  for (const path of ["/applications/nope/endpoints", "/applications/shop/endpoints/nope", "/applications/nope/endpoints/orders"]) {
    const reply = await h.request("GET", path);
    assert.equal([reply.status, reply.body.code], [404, "managed_endpoint_not_found"], path);
  }
  for (const path of ["/management/model?limit=5", "/applications?x=1", "/applications/shop/endpoints?route=/a", "/applications/shop/endpoints/orders?verbose"]) {
    const reply = await h.request("GET", path);
    assert.equal([reply.status, reply.body.code], [400, "invalid_query"], `${path}: these reads take no query parameters`);
  }
});

management("PUT creates a mapping: only label lines change, comments stay, the file validates and the change is live", async (context) => {
  const { h, path } = context;
  const reply = await h.request("PUT", "/applications/shop/endpoints/spare", { body: { route: "/hooks/spare" }, reason: "wire spare" });
  assert.is(reply.status, 200);
  assert.equal(reply.body.applied, true);
  assert.equal(reply.body.action, "created");
  assert.equal(reply.body.endpoint.route, "/hooks/spare");
  assert.equal(reply.body.audit, { reason: "wire spare" });
  const text = readFileSync(path, "utf8");
  assert.ok(text.includes("# Spool config for admin tests") && text.includes("# unmapped pull route") && text.includes("# the orders endpoint"));
  assert.is(compileSpoolfile(text, path).diagnostics.filter((d) => d.severity === "error").length, 0, "the rewritten file passes validation");
  const removedLines = SPOOLFILE.split("\n").filter((line) => !text.split("\n").includes(line));
  assert.equal(removedLines, [], "no original line was changed");
  assert.is(text.split("\n").length, SPOOLFILE.split("\n").length + 2);
  const live = await h.request("GET", "/applications/shop/endpoints/spare");
  assert.is(live.status, 200, "live when the response returned");
  assert.is(context.reloads, 1);
  assert.equal(h.audits.map((a) => [a.tool, a.result, a.metadata]), [
    [
      "management_endpoint_upsert",
      "ok",
      { kind: "config_mutation", operation: "upsert_endpoint", mode: "file_rewrite", outcome: "created", application: "shop", endpoint_name: "spare", route: "/hooks/spare" },
    ],
  ]);
});

management("PUT of the current mapping is a noop that leaves the file alone", async (context) => {
  const reply = await context.h.request("PUT", "/applications/shop/endpoints/orders", { body: { route: "/hooks/orders" } });
  assert.equal([reply.status, reply.body.applied, reply.body.action], [200, false, "noop"]);
  assert.is(readFileSync(context.path, "utf8"), SPOOLFILE);
  assert.is(context.reloads, 0);
});

management("PUT moves an endpoint to another route with the same mode and targets", async (context) => {
  const { h, path } = context;
  const reply = await h.request("PUT", "/applications/shop/endpoints/orders", { body: { route: "/hooks/spare" } });
  assert.equal([reply.status, reply.body.action, reply.body.endpoint.route], [200, "updated", "/hooks/spare"]);
  const config = compileOrThrow(readFileSync(path, "utf8"), path);
  const byPath = Object.fromEntries(config.routes.map((r) => [r.path, [r.application, r.endpointName]]));
  assert.equal(byPath["/hooks/orders"], [null, null]);
  assert.equal(byPath["/hooks/spare"], ["shop", "orders"]);
  assert.ok(readFileSync(path, "utf8").includes("# orders from the shop"));
});

management("refused PUTs name their code and leave the file byte-identical", async (context) => {
  const { h, path } = context;
  await h.seed([message("busy", "/hooks/returns")]);
  const cases: [string, unknown, number, string][] = [
    ["/applications/shop/endpoints/spare", { route: "hooks/spare" }, 400, "invalid_body"],
    ["/applications/shop/endpoints/spare", { route: "/hooks/nowhere" }, 404, "management_route_not_found"],
    ["/applications/shop/endpoints/spare", { route: "/hooks/closed" }, 409, "management_route_publish_disabled"],
    ["/applications/shop/endpoints/spare", { route: "/hooks/orders" }, 409, "management_route_already_mapped"],
    ["/applications/shop/endpoints/orders", { route: "/hooks/push" }, 409, "management_route_target_mismatch"],
    ["/applications/shop/endpoints/returns", { route: "/hooks/spare" }, 409, "management_route_backlog_active"],
    ["/applications/shop/endpoints/spare", { route: "/hooks/spare", extra: true }, 400, "invalid_body"],
    ["/applications/sh%20op/endpoints/spare", { route: "/hooks/spare" }, 400, "invalid_body"],
  ];
  for (const [url, body, status, code] of cases) {
    const reply = await h.request("PUT", url, { body });
    assert.equal([reply.status, reply.body.code], [status, code], `${url} ${JSON.stringify(body)}`);
  }
  const noReason = await h.request("PUT", "/applications/shop/endpoints/spare", { body: { route: "/hooks/spare" }, reason: null });
  assert.equal([noReason.status, noReason.body.code], [400, "audit_reason_required"]);
  assert.is(readFileSync(path, "utf8"), SPOOLFILE);
  assert.is(context.reloads, 0);
  assert.is(h.audits.length, cases.length + 1);
  assert.ok(h.audits.every((a) => a.result !== "ok"));
});

management("a PUT whose reload is refused restores the file byte-identical and keeps the old config", async (context) => {
  const { h, path } = context;
  const original = readFileSync(path);
  context.refuseReload = true;
  const reply = await h.request("PUT", "/applications/shop/endpoints/spare", { body: { route: "/hooks/spare" } });
  assert.equal([reply.status, reply.body.code], [409, "management_apply_failed"]);
  assert.match(reply.body.detail, /listener change needs a restart/);
  assert.ok(readFileSync(path).equals(original), "byte-identical");
  const gone = await h.request("GET", "/applications/shop/endpoints/spare");
  assert.is(gone.status, 404);
  assert.equal(h.audits.map((a) => a.result), ["management_apply_failed"]);
});

management("DELETE removes the labels and answers the removed endpoint", async (context) => {
  const { h, path } = context;
  const reply = await h.request("DELETE", "/applications/shop/endpoints/orders", { reason: "retire" });
  assert.equal([reply.status, reply.body.applied, reply.body.action, reply.body.endpoint.route], [200, true, "deleted", "/hooks/orders"]);
  const text = readFileSync(path, "utf8");
  assert.ok(!text.includes('endpoint_name "orders"'));
  assert.ok(text.includes("# orders from the shop"));
  assert.is(compileOrThrow(text, path).routes.find((r) => r.path === "/hooks/orders")?.application, null);
  assert.is((await h.request("GET", "/applications/shop/endpoints/orders")).status, 404);
  assert.equal(h.audits[0].metadata.kind, "config_mutation");
  assert.equal((h.audits[0].metadata as { outcome: string }).outcome, "deleted");
  const again = await h.request("DELETE", "/applications/shop/endpoints/orders");
  assert.equal([again.status, again.body.code], [404, "managed_endpoint_not_found"]);
  for (const path of ["/applications/bad%20name/endpoints/x", "/applications/-x/endpoints/y", "/applications/shop/endpoints/-z"]) {
    const unknown = await h.request("DELETE", path);
    assert.equal([unknown.status, unknown.body.code], [404, "managed_endpoint_not_found"], `${path}: a name no endpoint can have is not found`);
  }
});

management("DELETE refuses while the route has queued messages and leaves the file alone", async (context) => {
  await context.h.seed([message("waiting", "/hooks/orders")]);
  const reply = await context.h.request("DELETE", "/applications/shop/endpoints/orders");
  assert.equal([reply.status, reply.body.code], [409, "management_route_backlog_active"]);
  assert.is(readFileSync(context.path, "utf8"), SPOOLFILE);
});

management("concurrent PUTs are applied one after the other", async (context) => {
  const { h, path } = context;
  const [first, second] = await Promise.all([
    h.request("PUT", "/applications/shop/endpoints/spare", { body: { route: "/hooks/spare" } }),
    h.request("PUT", "/applications/ops/endpoints/push", { body: { route: "/hooks/push" } }),
  ]);
  assert.equal([first.status, second.status], [200, 200]);
  const config = compileOrThrow(readFileSync(path, "utf8"), path);
  const labelled = config.routes.filter((r) => r.application !== null).map((r) => `${r.application}/${r.endpointName}`).sort();
  assert.equal(labelled, ["compliance/trail", "ops/push", "shop/orders", "shop/returns", "shop/spare"]);
});

{
  const probe = join(dir.path, "probe");
  mkdirSync(probe);
  const undo = makeReadOnly(probe);
  undo?.();
  if (!undo) {
    reportSkipped("admin management model: unwritable config directory", 1, "running as root without chattr, a directory cannot be made read-only");
  } else {
    management("a PUT or DELETE whose Spoolfile cannot be written is 409 management_apply_failed naming the cause; file and config stay", async (context) => {
      const { h, path } = context;
      const original = readFileSync(path);
      // A read-only directory, as a read-only mount or a Kubernetes ConfigMap gives: the atomic
      // write's temporary file cannot be created there.
      const restore = makeReadOnly(dirname(path))!;
      try {
        const put = await h.request("PUT", "/applications/shop/endpoints/spare", { body: { route: "/hooks/spare" } });
        assert.equal([put.status, put.body.code], [409, "management_apply_failed"]);
        assert.match(put.body.detail, /cannot write the config file .*\((EACCES|EPERM)\b/);
        const del = await h.request("DELETE", "/applications/shop/endpoints/orders");
        assert.equal([del.status, del.body.code], [409, "management_apply_failed"]);
      } finally {
        restore();
      }
      assert.ok(readFileSync(path).equals(original), "the file is untouched");
      assert.is(context.reloads, 0);
      assert.is((await h.request("GET", "/applications/shop/endpoints/spare")).status, 404);
      assert.is((await h.request("GET", "/applications/shop/endpoints/orders")).status, 200);
      assert.equal(h.audits.map((a) => a.result), ["management_apply_failed", "management_apply_failed"]);
    });
  }
}

management.run();
