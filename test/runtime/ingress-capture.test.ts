import { suite } from "uvu";
import * as assert from "uvu/assert";
import { newLeaseId, newMessageId, restartMessageIdStreamAt } from "../../runtime/store/ids.js";
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

ids("message and lease ids are a prefix and 16 hex characters, all distinct", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 5000; i++) {
    const id = newMessageId();
    assert.match(id, /^evt_[0-9a-f]{16}$/);
    seen.add(id);
    const lease = newLeaseId();
    assert.match(lease, /^lease_[0-9a-f]{16}$/);
    seen.add(lease);
  }
  assert.is(seen.size, 10_000);
});

ids("lease ids share no bytes across pool refills (8 random bytes each)", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 5000; i++) seen.add(newLeaseId().slice("lease_".length));
  assert.is(seen.size, 5000);
});

ids("one process's message ids are consecutive in index order", () => {
  restartMessageIdStreamAt(0);
  const batch = Array.from({ length: 1000 }, () => newMessageId());
  assert.equal([...batch].sort(), batch, "ids sort in the order they were made");
  const prefix = batch[0].slice(0, "evt_".length + 8);
  assert.ok(batch.every((id) => id.startsWith(prefix)), "one stream prefix");
});

ids("the counter is written as 8 hex digits across every byte boundary", () => {
  for (const start of [0, 0xfe, 0xfffe, 0x00fffffe, 0x12ff_fffe, 0xfeff_fffe]) {
    restartMessageIdStreamAt(start);
    const made = Array.from({ length: 4 }, () => newMessageId().slice(-8));
    assert.equal(made, [0, 1, 2, 3].map((step) => (start + step).toString(16).padStart(8, "0")));
  }
});

ids("a stream is replaced before its counter wraps, so no id repeats", () => {
  restartMessageIdStreamAt(2 ** 32 - 3);
  const made = Array.from({ length: 6 }, () => newMessageId());
  assert.equal(made.slice(0, 3).map((id) => id.slice(-8)), ["fffffffd", "fffffffe", "ffffffff"]);
  assert.is.not(made[3].slice(4, 12), made[0].slice(4, 12), "a new prefix after the last counter value");
  assert.is(new Set(made).size, 6);
});

ids.run();
