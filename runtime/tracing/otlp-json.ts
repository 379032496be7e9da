// Finished spans as an OTLP/HTTP JSON export request (ExportTraceServiceRequest in the protobuf JSON
// mapping: ids as hex, times and 64-bit integers as decimal strings, enums as numbers). Written out
// as text rather than built as objects for JSON.stringify: encoding runs on the event loop that
// serves requests, and building an object tree per span cost about three times this (the ingress
// benchmark's tracing comparison, docs/benchmarks.md). Strings go through JSON.stringify, so the
// text is exactly what JSON.stringify of the documented objects gives (test/tracing/otlp-json.test.ts).
import { SpanKind, type Attributes, type AttributeValue } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";

type HrTime = readonly [seconds: number, nanos: number];

/** OTLP's Span.SpanKind: the API's enum shifted by one (0 is UNSPECIFIED on the wire). */
const KIND: Record<SpanKind, number> = { [SpanKind.INTERNAL]: 1, [SpanKind.SERVER]: 2, [SpanKind.CLIENT]: 3, [SpanKind.PRODUCER]: 4, [SpanKind.CONSUMER]: 5 };

export function encodeSpans(spans: readonly ReadableSpan[]): Buffer {
  if (spans.length === 0) return Buffer.from('{"resourceSpans":[]}');
  const first = spans[0];
  const scope = first.instrumentationScope;
  let out =
    '{"resourceSpans":[{"resource":{"attributes":' +
    attributesOf(first.resource.attributes as Attributes) +
    '},"scopeSpans":[{"scope":{"name":' +
    JSON.stringify(scope.name) +
    (scope.version ? ',"version":' + JSON.stringify(scope.version) : "") +
    '},"spans":[';
  for (let i = 0; i < spans.length; i++) out += (i === 0 ? "" : ",") + spanOf(spans[i]);
  return Buffer.from(out + "]}]}]}");
}

function spanOf(span: ReadableSpan): string {
  const context = span.spanContext();
  const parent = span.parentSpanContext;
  let out = '{"traceId":"' + context.traceId + '","spanId":"' + context.spanId + '"';
  if (context.traceState) out += ',"traceState":' + JSON.stringify(context.traceState.serialize());
  if (parent) out += ',"parentSpanId":"' + parent.spanId + '"';
  out +=
    ',"name":' +
    JSON.stringify(span.name) +
    ',"kind":' +
    (KIND[span.kind] ?? 0) +
    ',"startTimeUnixNano":"' +
    nanos(span.startTime) +
    '","endTimeUnixNano":"' +
    nanos(span.endTime) +
    '","attributes":' +
    attributesOf(span.attributes);
  if (span.droppedAttributesCount > 0) out += ',"droppedAttributesCount":' + span.droppedAttributesCount;
  out += ',"links":[';
  for (let i = 0; i < span.links.length; i++) {
    const link = span.links[i];
    out += (i === 0 ? "" : ",") + '{"traceId":"' + link.context.traceId + '","spanId":"' + link.context.spanId + '"';
    if (link.context.traceState) out += ',"traceState":' + JSON.stringify(link.context.traceState.serialize());
    out += ',"attributes":' + attributesOf(link.attributes ?? {}) + "}";
  }
  out += '],"status":{"code":' + span.status.code;
  if (span.status.message) out += ',"message":' + JSON.stringify(span.status.message);
  return out + "}}";
}

/** Seconds and nanoseconds as one decimal string of nanoseconds (past 2^53: no float arithmetic). */
function nanos([seconds, fraction]: HrTime): string {
  if (seconds === 0) return String(fraction);
  const digits = String(fraction);
  return String(seconds) + "000000000".slice(digits.length) + digits;
}

function attributesOf(attributes: Attributes): string {
  let out = "[";
  for (const key in attributes) {
    const value = attributes[key];
    if (value === undefined || value === null) continue;
    out += (out.length === 1 ? "" : ",") + cached(keyCache, key, encodeKey) + anyValue(value) + "}";
  }
  return out + "]";
}

/**
 * Attribute names, and string values, repeat from span to span (method, route, scheme, address):
 * their encodings are remembered, in maps cleared when they grow past a bound (values such as paths
 * come from requests).
 */
const keyCache = new Map<string, string>();
const stringCache = new Map<string, string>();
const CACHE_LIMIT = 1024;

function cached(cache: Map<string, string>, text: string, encode: (text: string) => string): string {
  let encoded = cache.get(text);
  if (encoded === undefined) {
    encoded = encode(text);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(text, encoded);
  }
  return encoded;
}

const encodeKey = (key: string) => '{"key":' + JSON.stringify(key) + ',"value":';
const encodeString = (value: string) => '{"stringValue":' + JSON.stringify(value) + "}";

function anyValue(value: AttributeValue): string {
  if (typeof value === "string") return value.length <= 256 ? cached(stringCache, value, encodeString) : encodeString(value);
  if (typeof value === "boolean") return '{"boolValue":' + value + "}";
  if (typeof value === "number") {
    if (Number.isInteger(value)) return '{"intValue":"' + value + '"}';
    // JSON has no NaN or Infinity; protobuf's JSON mapping spells them as strings.
    return '{"doubleValue":' + (Number.isFinite(value) ? String(value) : JSON.stringify(String(value))) + "}";
  }
  let out = '{"arrayValue":{"values":[';
  let first = true;
  for (const element of value as unknown[]) {
    if (element === null || element === undefined) continue;
    out += (first ? "" : ",") + anyValue(element as AttributeValue);
    first = false;
  }
  return out + "]}}";
}
