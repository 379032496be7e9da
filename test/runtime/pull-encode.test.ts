// The hand-written dequeue reply (runtime/pull/encode.ts) must be byte for byte what
// JSON.stringify({ items }) of the documented item objects gives, escapes and all.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { EMPTY_DEQUEUE_REPLY, encodeDequeueReply } from "../../runtime/pull/encode.js";
import { toItem } from "../../runtime/pull/ops.js";
import type { LeasedMessage } from "../../runtime/store/records.js";
import { StoredLease } from "../../runtime/store/stored-lease.js";

const test = suite("pull dequeue reply encoding");

function leased(overrides: Partial<LeasedMessage> = {}): LeasedMessage {
  return {
    id: "msg_1",
    leaseId: "lease_00ff00ff00ff00ff_7",
    route: "/orders",
    target: "pull",
    payload: new Uint8Array(Buffer.from("hello")),
    headers: { "content-type": "application/json" },
    trace: null,
    receivedAtMs: Date.UTC(2026, 10, 23, 12, 0, 0, 5),
    attempt: 1,
    leaseUntilMs: Date.UTC(2026, 10, 23, 12, 0, 30, 5),
    ...overrides,
  };
}

const reference = (messages: LeasedMessage[]) => JSON.stringify({ items: messages.map(toItem) });

test("the exact text of a reply with two items", () => {
  const messages = [
    leased(),
    leased({ id: "msg_2", leaseId: "lease_aa_8", payload: new Uint8Array([0xff, 0x00, 0x10]), headers: {}, attempt: 3, receivedAtMs: Date.UTC(2026, 0, 2, 3, 4, 5, 6) }),
  ];
  assert.is(
    encodeDequeueReply(messages),
    '{"items":[' +
      '{"id":"msg_1","lease_id":"lease_00ff00ff00ff00ff_7","route":"/orders","target":"pull","payload_b64":"aGVsbG8=",' +
      '"headers":{"content-type":"application/json"},"received_at":"2026-11-23T12:00:00.005Z","attempt":1,"lease_until":"2026-11-23T12:00:30.005Z"},' +
      '{"id":"msg_2","lease_id":"lease_aa_8","route":"/orders","target":"pull","payload_b64":"/wAQ",' +
      '"headers":{},"received_at":"2026-01-02T03:04:05.006Z","attempt":3,"lease_until":"2026-11-23T12:00:30.005Z"}]}',
  );
  assert.is(encodeDequeueReply(messages), reference(messages));
});

test("no items", () => {
  assert.is(encodeDequeueReply([]), EMPTY_DEQUEUE_REPLY);
  assert.is(encodeDequeueReply([]), reference([]));
});

test("strings that need escaping, unicode, odd header names, empty payloads and repeated timestamps match JSON.stringify", () => {
  const payloadOf = (text: string) => new Uint8Array(Buffer.from(text));
  // A payload that is a view into a larger buffer: only its own bytes are encoded.
  const backing = Buffer.from("xxABCDEFyy");
  const messages = [
    leased({ id: 'id "quoted" \\ back', route: "/r\u0001\n\t", target: "täget\u2028", payload: payloadOf(""), headers: { "x-a": 'v"\u0000', "2": "num", "1": "first" } }),
    // The store parses stored headers with JSON.parse, which keeps "__proto__" as an own property.
    leased({ headers: JSON.parse('{"__proto__":"x","b":"y"}') as Record<string, string> }),
    leased({ id: "😀", leaseId: "lease_\ud800", payload: new Uint8Array(backing.buffer, backing.byteOffset + 2, 6), attempt: 12345, leaseUntilMs: 0 }),
    leased({ receivedAtMs: 8.64e15, leaseUntilMs: -1 }),
    // The trace context stored at ingress, with a traceparent when tracing ran.
    leased({ trace: { remote_addr: "127.0.0.1", path: '/p"q', traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" } }),
    ...Array.from({ length: 40 }, (_, i) => leased({ id: `m${i}`, payload: payloadOf("p".repeat(i)), receivedAtMs: 1_700_000_000_000 + (i >> 2) })),
    // Times within one second, across seconds and back, and before 1970; routes and targets changing midway.
    ...Array.from({ length: 30 }, (_, i) =>
      leased({ id: `t${i}`, route: i < 15 ? "/a" : '/b"', target: i % 10 < 5 ? "pull" : "https://x/\\u\u2028", receivedAtMs: 1_700_000_000_500 + (i % 2 ? 1 : -1) * i * 337, leaseUntilMs: -5_000 + i * 7 }),
    ),
    // A payload given as a Buffer (what SQLite hands over) and as a plain Uint8Array.
    leased({ payload: Buffer.from("buffered") }),
  ];
  assert.is(encodeDequeueReply(messages), reference(messages));
  assert.equal(JSON.parse(encodeDequeueReply(messages)).items[2].payload_b64, Buffer.from("ABCDEF").toString("base64"));
});

test("a lease read as base64 and stored JSON text is written as it is, the same items, headers in their stored order", () => {
  const bytes = new Uint8Array(Array.from({ length: 200 }, (_, i) => (i * 53) % 256));
  const b64 = Buffer.from(bytes).toString("base64");
  const headersJson = JSON.stringify({ "x-z": 'v"\u0000', "2": "two", "1": "one", "content-type": "text/plain" });
  const at = Date.UTC(2026, 10, 23, 12, 0, 0, 5);
  const stored = [
    new StoredLease("m1", "lease_1", "/orders", "pull", b64, headersJson, '{"traceparent":"00-a-b-01"}', at, 2, at + 30_000),
    new StoredLease("m2", "lease_2", "/orders", "pull", bytes, "{}", null, at, 1, at + 30_000),
    // A JSON null stored as the trace is no trace.
    new StoredLease("m3", "lease_3", "/orders", "pull", "", "{}", "null", at, 1, at + 30_000),
  ];
  const reply = encodeDequeueReply(stored);
  assert.equal(JSON.parse(reply), JSON.parse(reference(stored)));
  assert.ok(reply.includes(`"payload_b64":"${b64}","headers":${headersJson},"trace":{"traceparent":"00-a-b-01"}`), "base64 and stored text as they are");
  assert.is(JSON.parse(reply).items[2].trace, undefined);
  // Decoded on demand, for the gRPC binding and push deliveries.
  assert.equal([...stored[0].payload], [...bytes]);
  assert.is(stored[1].payloadB64, b64);
  assert.equal(Object.keys(stored[0].headers), ["1", "2", "x-z", "content-type"]);
  assert.equal(stored[0].trace, { traceparent: "00-a-b-01" });
  assert.is(stored[2].trace, null);
  assert.equal([...stored[2].payload], []);
});

test.run();
