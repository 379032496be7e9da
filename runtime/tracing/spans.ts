// The spans Spool makes (docs/operations.md "Tracing"): one SERVER span per request on the ingress,
// Pull and Admin listeners, one CLIENT span per push attempt, with the attributes of OpenTelemetry's
// HTTP conventions. Spans never hold bodies, header values (but the user agent) or tokens.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span, type TextMapGetter, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { redactUrlQueryValues } from "../../compiler/url-redact.js";

export type TracedMount = "ingress" | "pull" | "admin";

const SERVER_SPAN_NAMES: Record<TracedMount, string> = { ingress: "ingress", pull: "pull_api", admin: "admin_api" };

const propagator = new W3CTraceContextPropagator();

/** Node lower-cases incoming header names; a stored trace map uses the same lower-case keys. */
const recordGetter: TextMapGetter<Readonly<Record<string, string | string[] | undefined>>> = {
  get: (carrier, key) => carrier[key],
  keys: (carrier) => Object.keys(carrier),
};

/** The W3C trace context in `carrier` (request headers, a stored trace map) as a parent context; ROOT_CONTEXT without one. */
export function extractContext(carrier: Readonly<Record<string, string | string[] | undefined>>): Context {
  if (carrier.traceparent === undefined) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, carrier, recordGetter);
}

/** The `traceparent` (and `tracestate`) of a span, as headers or a trace map (W3C Trace Context, version 00). */
export function traceHeadersOf(span: Span): Record<string, string> {
  const { traceId, spanId, traceFlags, traceState } = span.spanContext();
  const traceparent = `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, "0")}`;
  const state = traceState?.serialize();
  return state ? { traceparent, tracestate: state } : { traceparent };
}

/** What a traced request carries while it runs: its span, and the route template its feature names. */
interface RequestTrace {
  readonly span: Span;
  readonly prefix: string;
  route: string | undefined;
  spoolRoute: string | undefined;
}

const REQUEST_TRACE = Symbol("spool.requestTrace");
type TracedRequest = IncomingMessage & { [REQUEST_TRACE]?: RequestTrace };

/** The handler of one mount, wrapped so each request gets a SERVER span that ends when its response closes. */
export function traceMountHandler<H extends (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>>(
  tracer: Tracer,
  mount: TracedMount,
  prefix: string,
  handler: H,
): (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void> {
  const name = SERVER_SPAN_NAMES[mount];
  return (req, res, path) => {
    const url = req.url ?? "/";
    const question = url.indexOf("?");
    const socket = req.socket;
    const attributes: Attributes = {
      "http.request.method": req.method ?? "",
      "url.path": question < 0 ? url : url.slice(0, question),
      "url.scheme": (socket as TLSSocket).encrypted ? "https" : "http",
      "server.port": socket.localPort,
      "client.address": socket.remoteAddress,
    };
    const userAgent = req.headers["user-agent"];
    if (userAgent !== undefined) attributes["user_agent.original"] = userAgent;
    const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, extractContext(req.headers));
    const entry: RequestTrace = { span, prefix, route: undefined, spoolRoute: undefined };
    (req as TracedRequest)[REQUEST_TRACE] = entry;
    res.once("close", () => endServerSpan(entry, res));
    return handler(req, res, path);
  };
}

function endServerSpan({ span, prefix, route, spoolRoute }: RequestTrace, res: ServerResponse): void {
  if (!span.isRecording()) return span.end();
  // One setAttributes call: the SDK checks every call's attributes, so fewer calls cost less per request.
  const attributes: Attributes = {};
  if (route !== undefined) attributes["http.route"] = prefix + route;
  if (spoolRoute !== undefined) attributes["spool.route"] = spoolRoute;
  if (res.headersSent) {
    const status = res.statusCode;
    attributes["http.response.status_code"] = status;
    if (status >= 500) {
      attributes["error.type"] = String(status);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  } else {
    // The client went away before any answer.
    attributes["error.type"] = "client_closed";
  }
  span.setAttributes(attributes);
  span.end();
}

/**
 * Names the route template a request matched (`http.route`, after the mount's prefix), and for
 * ingress the route (`spool.route`). Nothing happens on a request that is not traced.
 */
export function setRequestRoute(req: IncomingMessage, template: string, spoolRoute?: string): void {
  const entry = (req as TracedRequest)[REQUEST_TRACE];
  if (!entry) return;
  entry.route = template;
  entry.spoolRoute = spoolRoute;
}

/** The trace context to store with a message accepted by this request: its server span's traceparent (and tracestate); undefined when not traced. */
export function requestTraceContext(req: IncomingMessage): Record<string, string> | undefined {
  const entry = (req as TracedRequest)[REQUEST_TRACE];
  return entry ? traceHeadersOf(entry.span) : undefined;
}

export interface PushAttempt {
  readonly url: string;
  readonly route: string;
  readonly messageId: string;
  readonly attempt: number;
  /** The trace map stored with the message (traceparent and tracestate from ingress, when it was traced). */
  readonly stored: Readonly<Record<string, string>> | null;
}

export interface PushOutcome {
  readonly statusCode?: number;
  /** Why no answer came (network error, timeout, egress policy), when none did. */
  readonly error?: string;
  /** What the retry policy made of the attempt: acked, retry or dead. */
  readonly outcome: string;
  /** When the HTTP exchange ended (settling the message comes after and is not part of the span). */
  readonly endedAtMs: number;
}

export interface PushSpan {
  /** `traceparent` (and `tracestate`) for the push request: the client span's, replacing a stored one. */
  readonly headers: Readonly<Record<string, string>>;
  end(outcome: PushOutcome): void;
}

/**
 * A push attempt's CLIENT span: a child of the ingress span stored with the message, and linked to
 * it, so the delivery shows in the webhook's trace (a message without a stored context starts a trace).
 */
export function startPushSpan(tracer: Tracer, input: PushAttempt): PushSpan {
  const target = targetAttributes(input.url);
  const parent = input.stored ? extractContext(input.stored) : ROOT_CONTEXT;
  const parentSpan = trace.getSpanContext(parent);
  const links: Link[] = parentSpan ? [{ context: parentSpan }] : [];
  const span = tracer.startSpan(
    "POST",
    {
      kind: SpanKind.CLIENT,
      attributes: { "http.request.method": "POST", ...target, "spool.route": input.route, "spool.message_id": input.messageId, "spool.attempt": input.attempt },
      links,
    },
    parent,
  );
  return {
    headers: traceHeadersOf(span),
    end(outcome) {
      if (span.isRecording()) {
        span.setAttribute("spool.outcome", outcome.outcome);
        if (outcome.statusCode !== undefined) span.setAttribute("http.response.status_code", outcome.statusCode);
        if (outcome.statusCode !== undefined && outcome.statusCode >= 400) {
          span.setAttribute("error.type", String(outcome.statusCode));
          span.setStatus({ code: SpanStatusCode.ERROR });
        } else if (outcome.statusCode === undefined && outcome.error !== undefined) {
          span.setAttribute("error.type", errorType(outcome.error));
          span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
        }
      }
      span.end(outcome.endedAtMs);
    },
  };
}

const targetCache = new Map<string, Attributes>();

/** url.full without userinfo and with query values redacted, server.address and server.port; targets repeat, so cached. */
function targetAttributes(url: string): Attributes {
  let attributes = targetCache.get(url);
  if (attributes) return attributes;
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    const port = Number(parsed.port) || (parsed.protocol === "https:" ? 443 : 80);
    attributes = { "url.full": redactUrlQueryValues(parsed.toString()), "server.address": parsed.hostname.replace(/^\[|\]$/g, ""), "server.port": port };
  } catch {
    attributes = {};
  }
  if (targetCache.size >= 1024) targetCache.clear();
  targetCache.set(url, attributes);
  return attributes;
}

/** A low-cardinality error.type for a failure without a status: the error code the message starts with, or a class. */
function errorType(error: string): string {
  const code = /^(?:[A-Z][A-Z0-9_]+)\b/.exec(error);
  if (code) return code[0];
  if (error.startsWith("timeout")) return "timeout";
  if (error.includes("egress")) return "egress_denied";
  return "request_failed";
}
