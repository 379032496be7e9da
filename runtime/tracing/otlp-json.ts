// Finished spans as an OTLP/HTTP JSON export request (ExportTraceServiceRequest in the protobuf JSON
// mapping: ids as hex, times and 64-bit integers as decimal strings, enums as numbers).
import { SpanKind, type Attributes, type AttributeValue } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";

type HrTime = readonly [seconds: number, nanos: number];

/** OTLP's Span.SpanKind: the API's enum shifted by one (0 is UNSPECIFIED on the wire). */
const KIND: Record<SpanKind, number> = { [SpanKind.INTERNAL]: 1, [SpanKind.SERVER]: 2, [SpanKind.CLIENT]: 3, [SpanKind.PRODUCER]: 4, [SpanKind.CONSUMER]: 5 };

export function encodeSpans(spans: readonly ReadableSpan[]): Buffer {
  if (spans.length === 0) return Buffer.from('{"resourceSpans":[]}');
  const first = spans[0];
  const scope = first.instrumentationScope;
  const request = {
    resourceSpans: [
      {
        resource: { attributes: attributesOf(first.resource.attributes as Attributes) },
        scopeSpans: [{ scope: { name: scope.name, ...(scope.version ? { version: scope.version } : {}) }, spans: spans.map(spanOf) }],
      },
    ],
  };
  return Buffer.from(JSON.stringify(request));
}

function spanOf(span: ReadableSpan) {
  const context = span.spanContext();
  const parent = span.parentSpanContext;
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    ...(context.traceState ? { traceState: context.traceState.serialize() } : {}),
    ...(parent ? { parentSpanId: parent.spanId } : {}),
    name: span.name,
    kind: KIND[span.kind] ?? 0,
    startTimeUnixNano: nanos(span.startTime),
    endTimeUnixNano: nanos(span.endTime),
    attributes: attributesOf(span.attributes),
    ...(span.droppedAttributesCount > 0 ? { droppedAttributesCount: span.droppedAttributesCount } : {}),
    links: span.links.map((link) => ({
      traceId: link.context.traceId,
      spanId: link.context.spanId,
      ...(link.context.traceState ? { traceState: link.context.traceState.serialize() } : {}),
      attributes: attributesOf(link.attributes ?? {}),
    })),
    status: { code: span.status.code, ...(span.status.message ? { message: span.status.message } : {}) },
  };
}

function nanos([seconds, fraction]: HrTime): string {
  return (BigInt(seconds) * 1_000_000_000n + BigInt(fraction)).toString();
}

function attributesOf(attributes: Attributes) {
  const out: { key: string; value: object }[] = [];
  for (const key in attributes) {
    const value = attributes[key];
    if (value !== undefined && value !== null) out.push({ key, value: anyValue(value) });
  }
  return out;
}

function anyValue(value: AttributeValue): object {
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  return { arrayValue: { values: (value as unknown[]).filter((v) => v !== null && v !== undefined).map((v) => anyValue(v as AttributeValue)) } };
}
