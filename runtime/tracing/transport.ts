// One OTLP/HTTP POST to the collector (docs/operations.md "Tracing"): gzip when asked, the export
// headers, a timeout, TLS with the configured CA, client certificate and server name, and through an
// HTTP CONNECT proxy when `proxy_url` is set (the collector's TLS, custom CA included, runs inside
// the tunnel). The exporter package's own transport retries on a fixed schedule and cannot tunnel
// with a custom CA, so Spool sends the JSON itself (docs/decisions.md D120).
import { request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Agent as HttpAgent } from "node:http";
import type { Socket } from "node:net";
import { connect as tlsConnect, type ConnectionOptions } from "node:tls";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { parseRetryAfter } from "../http/retry-after.js";
import type { ExportSettings } from "./settings.js";

/** What one POST came to: retryable per the contract (network error, timeout, 429, 502, 503, 504) or not. */
export type SendResult =
  | { readonly kind: "ok" }
  | { readonly kind: "retryable"; readonly reason: string; readonly retryAfterMs?: number }
  | { readonly kind: "failed"; readonly reason: string };

export interface CollectorTls {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly servername?: string;
  readonly rejectUnauthorized: boolean;
}

export interface Transport {
  send(body: Buffer, signal: AbortSignal): Promise<SendResult>;
  close(): void;
}

const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);
/** A collector's answer is a small JSON document; more than this is not read. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const gzipAsync = promisify(gzip);

export function createTransport(settings: ExportSettings, tls: CollectorTls): Transport {
  const secure = settings.url.protocol === "https:";
  const tlsOptions: ConnectionOptions = {
    ...(tls.ca ? { ca: tls.ca } : {}),
    ...(tls.cert ? { cert: tls.cert } : {}),
    ...(tls.key ? { key: tls.key } : {}),
    ...(tls.servername ? { servername: tls.servername } : {}),
    rejectUnauthorized: tls.rejectUnauthorized,
  };
  // Without a proxy, one keep-alive agent; through a proxy, one tunnel per export (exports are
  // seconds apart, and a tunnel is only as good as the proxy keeps it).
  const agent = settings.proxy ? undefined : secure ? new HttpsAgent({ keepAlive: true, maxSockets: 2, ...tlsOptions }) : new HttpAgent({ keepAlive: true, maxSockets: 2 });
  const port = Number(settings.url.port) || (secure ? 443 : 80);
  const host = settings.url.hostname.replace(/^\[|\]$/g, "");

  async function send(payload: Buffer, signal: AbortSignal): Promise<SendResult> {
    const body = settings.gzip ? await gzipAsync(payload) : payload;
    const headers: Record<string, string | number> = { ...settings.headers, "Content-Length": body.length };
    if (settings.gzip) headers["Content-Encoding"] = "gzip";
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error(`timeout after ${settings.timeoutMs} ms`)), settings.timeoutMs);
    const abort = AbortSignal.any([deadline.signal, signal]);
    try {
      const socket = settings.proxy ? await tunnel(settings, host, port, abort) : undefined;
      const connection = socket && secure ? tlsConnect({ ...tlsOptions, socket, host, servername: tls.servername ?? serverNameOf(host) }) : socket;
      return await post(body, headers, connection, abort);
    } catch (error) {
      // Every failure before an answer (refused, reset, timeout, TLS, the proxy) may heal: retryable.
      return { kind: "retryable", reason: abort.aborted ? reasonOf(abort.reason) : reasonOf(error) };
    } finally {
      clearTimeout(timer);
    }
  }

  function post(body: Buffer, headers: Record<string, string | number>, connection: Socket | undefined, abort: AbortSignal): Promise<SendResult> {
    return new Promise((resolve, reject) => {
      const options = { method: "POST", headers, signal: abort, ...(connection ? { createConnection: () => connection } : { agent }) };
      const req: ClientRequest = secure ? httpsRequest(settings.url, { ...tlsOptions, ...options }) : httpRequest(settings.url, options);
      req.once("error", reject);
      req.once("response", (res) => void answer(res).then(resolve, reject));
      req.end(body);
    });
  }

  return {
    send,
    close: () => agent?.destroy(),
  };
}

/** The collector's answer, its body read (bounded) so the connection can be reused. */
async function answer(res: IncomingMessage): Promise<SendResult> {
  let read = 0;
  for await (const chunk of res) {
    read += (chunk as Buffer).length;
    if (read > MAX_RESPONSE_BYTES) {
      res.destroy();
      break;
    }
  }
  const status = res.statusCode ?? 0;
  if (status >= 200 && status < 300) return { kind: "ok" };
  const reason = `the collector answered ${status}`;
  if (!RETRYABLE_STATUSES.has(status)) return { kind: "failed", reason };
  const retryAfterMs = parseRetryAfter(res.headers["retry-after"], Date.now());
  return retryAfterMs === undefined ? { kind: "retryable", reason } : { kind: "retryable", reason, retryAfterMs };
}

/** Opens a CONNECT tunnel to host:port through the proxy; resolves with the raw socket. */
function tunnel(settings: ExportSettings, host: string, port: number, signal: AbortSignal): Promise<Socket> {
  const proxy = settings.proxy!;
  const authority = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: proxy.host,
      port: proxy.port,
      method: "CONNECT",
      path: authority,
      headers: { Host: authority, ...(proxy.authorization ? { "Proxy-Authorization": proxy.authorization } : {}) },
      signal,
      agent: false,
    });
    req.once("error", reject);
    req.once("connect", (res, socket) => {
      if (res.statusCode === 200) return resolve(socket);
      socket.destroy();
      reject(new Error(`the proxy answered ${res.statusCode} to CONNECT ${authority}`));
    });
    req.end();
  });
}

/** SNI is a name, never an address (RFC 6066 §3). */
function serverNameOf(host: string): string | undefined {
  return /^[\d.]+$/.test(host) || host.includes(":") ? undefined : host;
}

function reasonOf(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return `${typeof code === "string" ? `${code} ` : ""}${error.message}`;
  }
  return String(error);
}
