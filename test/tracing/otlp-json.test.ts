// The hand-written OTLP JSON (runtime/tracing/otlp-json.ts) must be byte for byte what JSON.stringify
// of the ExportTraceServiceRequest objects gives, for spans the SDK made: escapes, links, trace
// state, events of every attribute type, and nanosecond times past 2^53.
import { SpanKind, SpanStatusCode, ROOT_CONTEXT, trace, type Attributes, type AttributeValue } from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOnSampler, BasicTracerProvider, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { encodeSpans } from "../../runtime/tracing/otlp-json.js";

const test = suite("OTLP JSON encoding");

function makeSpans(): ReadableSpan[] {
  const ended: ReadableSpan[] = [];
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "spool", "service.version": "1.2.3" }),
    sampler: new AlwaysOnSampler(),
    spanProcessors: [{ onStart() {}, onEnd: (span) => void ended.push(span), forceFlush: async () => {}, shutdown: async () => {} }],
  });
  const tracer = provider.getTracer("spool", "1.2.3");
  const root = tracer.startSpan('in"gress\n', { kind: SpanKind.SERVER, startTime: [1_795_000_000, 1], attributes: { "url.path": '/a"b\\c\u0001\u2028😀', "server.port": 8080, ratio: 0.25, ok: true, list: ["x", "y"], nums: [1, 2.5] } });
  root.setStatus({ code: SpanStatusCode.ERROR, message: "bad \"thing\"" });
  root.end([1_795_000_000, 5]);
  const parent = trace.setSpanContext(ROOT_CONTEXT, { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1, isRemote: true, traceState: new TraceState("a=1,b=2") });
  const child = tracer.startSpan("POST", { kind: SpanKind.CLIENT, links: [{ context: trace.getSpanContext(parent)!, attributes: { why: "stored" } }], attributes: { "long.path": "p".repeat(300) } }, parent);
  child.end();
  const internal = tracer.startSpan("store", { kind: SpanKind.INTERNAL, startTime: [0, 7] });
  internal.end([0, 9]);
  return ended;
}

const nanos = ([s, n]: [number, number]) => (BigInt(s) * 1_000_000_000n + BigInt(n)).toString();
const anyValue = (v: AttributeValue): object =>
  typeof v === "string" ? { stringValue: v } : typeof v === "boolean" ? { boolValue: v } : typeof v === "number" ? (Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v }) : { arrayValue: { values: (v as AttributeValue[]).map(anyValue) } };
const attributes = (a: Attributes) => Object.entries(a).map(([key, value]) => ({ key, value: anyValue(value!) }));

function reference(spans: ReadableSpan[]): string {
  const kinds: Record<number, number> = { [SpanKind.INTERNAL]: 1, [SpanKind.SERVER]: 2, [SpanKind.CLIENT]: 3 };
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: attributes(spans[0].resource.attributes as Attributes) },
        scopeSpans: [
          {
            scope: { name: "spool", version: "1.2.3" },
            spans: spans.map((s) => ({
              traceId: s.spanContext().traceId,
              spanId: s.spanContext().spanId,
              ...(s.spanContext().traceState ? { traceState: s.spanContext().traceState!.serialize() } : {}),
              ...(s.parentSpanContext ? { parentSpanId: s.parentSpanContext.spanId } : {}),
              name: s.name,
              kind: kinds[s.kind],
              startTimeUnixNano: nanos(s.startTime as [number, number]),
              endTimeUnixNano: nanos(s.endTime as [number, number]),
              attributes: attributes(s.attributes),
              links: s.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, ...(l.context.traceState ? { traceState: l.context.traceState.serialize() } : {}), attributes: attributes(l.attributes ?? {}) })),
              status: { code: s.status.code, ...(s.status.message ? { message: s.status.message } : {}) },
            })),
          },
        ],
      },
    ],
  });
}

test("the encoding is JSON.stringify of the documented objects, twice (the caches give the same text)", () => {
  const spans = makeSpans();
  assert.is(encodeSpans(spans).toString("utf8"), reference(spans));
  assert.is(encodeSpans(spans).toString("utf8"), reference(spans));
});

test("times: nanoseconds past 2^53 exactly, and a zero second", () => {
  const spans = makeSpans();
  const decoded = JSON.parse(encodeSpans(spans).toString("utf8"));
  const [root, child, internal] = decoded.resourceSpans[0].scopeSpans[0].spans;
  assert.is(root.endTimeUnixNano, "1795000000000000005");
  assert.is(internal.startTimeUnixNano, "7");
  assert.is(child.traceState, "a=1,b=2");
  assert.is(child.parentSpanId, "b7ad6b7169203331");
});

test("no spans", () => {
  assert.equal(JSON.parse(encodeSpans([]).toString()), { resourceSpans: [] });
});

test.run();
