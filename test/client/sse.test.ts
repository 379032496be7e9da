// The worker library's event-stream reader: events split across chunks, CRLF line ends, comments,
// multi-line data, and an event with no data (which is not dispatched).
import { suite } from "uvu";
import * as assert from "uvu/assert";
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

test("payloads decode by content type: JSON that parses, text, and bytes otherwise", () => {
  assert.equal(decodePayload(Buffer.from('{"x":[1]}'), "application/json; charset=utf-8"), { x: [1] });
  assert.equal(decodePayload(Buffer.from("[1]"), "application/vnd.api+json"), [1]);
  assert.instance(decodePayload(Buffer.from("{oops"), "application/json"), Buffer);
  assert.is(decodePayload(Buffer.from("héllo"), "text/plain"), "héllo");
  assert.instance(decodePayload(Buffer.from([1, 2]), undefined), Buffer);
});

test.run();
