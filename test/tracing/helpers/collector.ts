// A fake OTLP/HTTP collector for the tracing tests: a node:http or node:https server that records
// every export request (path, headers, the JSON body decoded, gunzipped when sent gzip) and answers
// as the test says (200 by default).
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { gunzipSync } from "node:zlib";
import { eventually } from "../../app/helpers/http.js";

export interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string; boolValue?: boolean; doubleValue?: number };
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  links: { traceId: string; spanId: string }[];
  status: { code: number; message?: string };
}

export interface ExportRequest {
  readonly path: string;
  readonly headers: IncomingMessage["headers"];
  /** The body as sent (gzip when Content-Encoding says so). */
  readonly raw: Buffer;
  readonly json: { resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[] };
  /** The client certificate's subject CN, on a TLS collector that asked for one. */
  readonly clientCn?: string;
}

export type CollectorAnswer = (request: ExportRequest, res: ServerResponse) => void;

export interface Collector {
  readonly port: number;
  /** `http(s)://127.0.0.1:<port><path>`. */
  url(path?: string): string;
  readonly requests: ExportRequest[];
  /** Every span of every export so far. */
  spans(): OtlpSpan[];
  waitForSpans(count: number, what?: string): Promise<OtlpSpan[]>;
  /** Replaces how the next requests are answered. */
  answer: CollectorAnswer;
  close(): Promise<void>;
}

export interface CollectorTlsOptions {
  readonly cert: string;
  readonly key: string;
  /** Require a client certificate signed by this CA. */
  readonly clientCa?: string;
}

export async function startCollector(options: { tls?: CollectorTlsOptions } = {}): Promise<Collector> {
  const requests: ExportRequest[] = [];
  const collector = {
    answer: ((_, res) => res.writeHead(200, { "content-type": "application/json" }).end("{}")) as CollectorAnswer,
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const text = (req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw).toString("utf8");
      const peer = (req.socket as TLSSocket).getPeerCertificate?.();
      const request: ExportRequest = { path: req.url ?? "", headers: req.headers, raw, json: JSON.parse(text), clientCn: peer?.subject?.CN as string | undefined };
      requests.push(request);
      collector.answer(request, res);
    });
  };
  const tls = options.tls;
  const server: Server = tls
    ? createHttpsServer(
        { cert: readFileSync(tls.cert), key: readFileSync(tls.key), ...(tls.clientCa ? { ca: readFileSync(tls.clientCa), requestCert: true, rejectUnauthorized: true } : {}) },
        onRequest,
      )
    : createServer(onRequest);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const spans = () => requests.flatMap((r) => r.json.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  return Object.assign(collector, {
    port,
    url: (path = "") => `${tls ? "https" : "http"}://127.0.0.1:${port}${path}`,
    requests,
    spans,
    waitForSpans: (count: number, what = `${count} spans`) => eventually(() => (spans().length >= count ? spans() : undefined), 15_000, what),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** An attribute's value as a plain value (intValue as a number). */
export function attr(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const found = span.attributes.find((a) => a.key === key)?.value;
  if (!found) return undefined;
  if (found.intValue !== undefined) return Number(found.intValue);
  return found.stringValue ?? found.boolValue ?? found.doubleValue;
}

/** OTLP's SpanKind numbers. */
export const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;
