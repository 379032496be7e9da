// The worker library's event-stream reader: events split across chunks, CRLF line ends (also a CRLF
// split between two chunks, over real HTTP too), comments, multi-line data, and an event with no
// data (which is not dispatched).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { PullClient } from "../../client/index.js";
import { readEvents, type SseEvent } from "../../client/sse.js";
import { decodePayload } from "../../client/message.js";

async function collect(chunks: string[]): Promise<SseEvent[]> {
  const encoder = new TextEncoder();
  async function* body() {
    for (const chunk of chunks) yield encoder.encode(chunk);
  }
  const events: SseEvent[] = [];
  for await (const event of readEvents(body())) events.push(event);
  return events;
}

const test = suite("client SSE reader and payload decoding");

test("events split anywhere across chunks arrive whole, comments are skipped", async () => {
  const text = ': keepalive\n\nid: lease_1\nevent: message\ndata: {"a":1}\n\n: keepalive\n\nid: lease_2\nevent: message\ndata: {"a":2}\n\n';
  for (const size of [1, 3, 7, text.length]) {
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
    assert.equal(await collect(chunks), [
      { id: "lease_1", event: "message", data: '{"a":1}' },
      { id: "lease_2", event: "message", data: '{"a":2}' },
    ], `chunks of ${size}`);
  }
});

test("CRLF line ends, multi-line data, the default event type, and a block without data", async () => {
  assert.equal(await collect(["event: error\r\ndata: store\r\ndata: down\r\n\r\n", "id: x\n\n", "data:plain\n\n"]), [
    { id: undefined, event: "error", data: "store\ndown" },
    { id: undefined, event: "message", data: "plain" },
  ]);
});

test("CRLF, CR and LF line ends end one line each wherever the chunks split them", async () => {
  const text = "id: a\r\ndata: one\r\ndata: two\r\n\r\nid: b\rdata: three\r\rid: c\ndata: four\n\n";
  const expected = [
    { id: "a", event: "message", data: "one\ntwo" },
    { id: "b", event: "message", data: "three" },
    { id: "c", event: "message", data: "four" },
  ];
  for (let cut = 0; cut <= text.length; cut++) {
    assert.equal(await collect([text.slice(0, cut), text.slice(cut)]), expected, `split at ${cut}`);
  }
  // A CR ending a chunk ends its line at once: the event is not held back for the next chunk.
  const events = readEvents((async function* () {
    yield "data: now\r\r";
    await new Promise(() => {}); // the stream stays open
  })());
  assert.equal((await events.next()).value, { id: undefined, event: "message", data: "now" });
});

test("a CRLF split between two writes of a real HTTP stream is one line end (PullClient.stream)", async () => {
  const item = { id: "msg_1", lease_id: "lease_1", route: "/hooks/sse", target: "pull:/sse", payload_b64: Buffer.from('{"n":1}').toString("base64"), headers: { "Content-Type": "application/json" }, received_at: "2026-01-01T00:00:00Z", attempt: 1, lease_until: "2026-01-01T00:01:00Z" };
  const json = JSON.stringify(item);
  const half = json.indexOf('"lease_id"');
  const server = createServer(async (request, response) => {
    assert.is(request.url, "/sse/stream");
    response.writeHead(200, { "content-type": "text/event-stream" });
    // The data spans two lines (JSON allows the line break), and the CRLF between them is cut in two.
    response.write(`event: message\r\ndata: ${json.slice(0, half)}\r`);
    await delay(100);
    response.write(`\ndata: ${json.slice(half)}\r\n\r\n`);
    await delay(20);
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const client = new PullClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: "t", endpoint: "/sse" });
  try {
    const messages = [];
    for await (const message of client.stream()) messages.push(message);
    assert.equal(messages.map((m) => [m.id, m.leaseId, m.payload]), [["msg_1", "lease_1", { n: 1 }]]);
  } finally {
    await client.close();
    await new Promise((resolve) => server.close(resolve));
  }
});

test("payloads decode by content type: JSON that parses, text, and bytes otherwise", () => {
  assert.equal(decodePayload(Buffer.from('{"x":[1]}'), "application/json; charset=utf-8"), { x: [1] });
  assert.equal(decodePayload(Buffer.from("[1]"), "application/vnd.api+json"), [1]);
  assert.instance(decodePayload(Buffer.from("{oops"), "application/json"), Buffer);
  assert.is(decodePayload(Buffer.from("héllo"), "text/plain"), "héllo");
  assert.instance(decodePayload(Buffer.from([1, 2]), undefined), Buffer);
});

test.run();
