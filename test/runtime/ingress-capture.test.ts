import { suite } from "uvu";
import * as assert from "uvu/assert";
import { newLeaseId, newMessageId } from "../../runtime/ids.js";
import { captureHeaders, canonicalHeaderName } from "../../runtime/ingress/capture.js";

const capture = suite("stored ingress headers");

capture("canonical names, repeated values joined with a comma in arrival order, credentials left out", () => {
  const headers = captureHeaders({
    rawHeaders: ["host", "example.com", "X-GitHub-Event", "push", "x-tag", "a", "Authorization", "Bearer s", "X-TAG", "b", "COOKIE", "c=1", "proxy-authorization", "p"],
  });
  assert.equal(headers, { Host: "example.com", "X-Github-Event": "push", "X-Tag": "a,b" });
  assert.equal(Object.keys(headers), ["Host", "X-Github-Event", "X-Tag"]);
  assert.is(Object.getPrototypeOf(headers), Object.prototype);
});

capture("empty values are kept and joined like any other", () => {
  assert.equal(captureHeaders({ rawHeaders: ["x-e", "", "x-e", "v"] }), { "X-E": ",v" });
});

capture("headers copied by forward auth replace a sent header of the same name in its place, new ones go last", () => {
  const headers = captureHeaders({ rawHeaders: ["x-user", "sent", "x-other", "o"] }, { "X-User": "verified", "x-tenant": "t1", Cookie: "never" });
  assert.equal(headers, { "X-User": "verified", "X-Other": "o", "X-Tenant": "t1" });
  assert.equal(Object.keys(headers), ["X-User", "X-Other", "X-Tenant"]);
});

capture("a header named __proto__ is stored as data and does not change the object's prototype", () => {
  const headers = captureHeaders({ rawHeaders: ["__proto__", "a", "__proto__", "b", "constructor", "c"] });
  assert.is(Object.getPrototypeOf(headers), Object.prototype);
  assert.equal(Object.keys(headers), ["__proto__", "Constructor"]);
  assert.is(JSON.stringify(headers), '{"__proto__":"a,b","Constructor":"c"}');
});

capture("names stay canonical however many distinct names have been seen", () => {
  for (let i = 0; i < 1500; i++) captureHeaders({ rawHeaders: [`x-name-${i}`, "v"] });
  assert.equal(captureHeaders({ rawHeaders: ["x-late-arrival", "v", "x-name-3", "w", "AUTHORIZATION", "s"] }), { "X-Late-Arrival": "v", "X-Name-3": "w" });
  assert.is(canonicalHeaderName("x-hub-signature-256"), "X-Hub-Signature-256");
});

capture.run();

const ids = suite("generated ids");

ids("message and lease ids are a prefix and 16 hex characters, distinct across many pool refills", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 5000; i++) {
    const id = newMessageId();
    assert.match(id, /^evt_[0-9a-f]{16}$/);
    seen.add(id.slice("evt_".length));
    const lease = newLeaseId();
    assert.match(lease, /^lease_[0-9a-f]{16}$/);
    seen.add(lease.slice("lease_".length));
  }
  // 8 random bytes each: a repeat among 10,000 would mean bytes were handed out twice.
  assert.is(seen.size, 10_000);
});

ids.run();
