// The Admin API over IR compiled from Spoolfile text: publish policy and route publish switches as
// an operator writes them.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile } from "../../compiler/index.js";
import type { SpoolConfig } from "../../compiler/ir.js";
import { b64, startHarness } from "./harness.js";

function compile(text: string): SpoolConfig {
  const result = compileSpoolfile(text, "Spoolfile");
  if (!result.config) throw new Error(result.diagnostics.map((d) => d.message).join("; "));
  return result.config;
}

const ROUTES = `pull_api { auth token raw:pull-secret }
/hooks/orders {
  max_body 8
  pull { path /orders }
}
/hooks/nodirect {
  publish.direct off
  pull { path /nodirect }
}
/hooks/shop {
  application "shop"
  endpoint_name "orders"
  pull { path /shop }
}
/hooks/fanout {
  deliver "https://a.example/in" { timeout 5s }
  deliver "https://b.example/in" { timeout 5s }
}
`;

const compiled = suite("admin over a compiled Spoolfile");

compiled("route switches, labels, max_body and fan-out targets come from the text", async () => {
  const h = await startHarness({ config: compile(ROUTES), backend: "memory" });
  try {
    const publish = (items: unknown[]) => h.request("POST", "/messages/publish", { body: { items } });
    const codes = [
      await publish([{ id: "a", route: "/hooks/orders", payload_b64: b64("123456789") }]),
      await publish([{ id: "a", route: "/hooks/nodirect", payload_b64: "" }]),
      await publish([{ id: "a", route: "/hooks/shop", payload_b64: "" }]),
      await publish([{ id: "a", route: "/hooks/fanout", payload_b64: "" }]),
    ].map((r) => r.body.code);
    assert.equal(codes, ["payload_too_large", "route_publish_disabled", "scoped_publish_required", "target_unresolvable"]);
    const ok = await publish([{ id: "a", route: "/hooks/fanout", target: "https://b.example/in", payload_b64: b64("12345678") }]);
    assert.equal(ok.body.ids, ["a"]);
    const scoped = await h.request("POST", "/applications/shop/endpoints/orders/messages/publish", { body: { items: [{ id: "s", payload_b64: "" }] } });
    assert.is(scoped.status, 200);
  } finally {
    await h.close();
  }
});

compiled("defaults publish_policy from the text gates publish and audit headers", async () => {
  const text = `defaults {
  publish_policy {
    direct off
    require_actor on
    actor_prefix "oncall-"
  }
}
${ROUTES}`;
  const h = await startHarness({ config: compile(text), backend: "memory" });
  try {
    const body = { items: [{ id: "a", route: "/hooks/orders", payload_b64: "" }] };
    const noActor = await h.request("POST", "/messages/publish", { body });
    assert.is(noActor.body.code, "audit_actor_required");
    const wrongActor = await h.request("POST", "/messages/publish", { body, headers: { "X-Spool-Audit-Actor": "intern" } });
    assert.is(wrongActor.body.code, "audit_actor_not_allowed");
    const direct = await h.request("POST", "/messages/publish", { body, headers: { "X-Spool-Audit-Actor": "oncall-ana" } });
    assert.equal([direct.status, direct.body.code], [403, "global_publish_disabled"]);
  } finally {
    await h.close();
  }
});

compiled.run();
