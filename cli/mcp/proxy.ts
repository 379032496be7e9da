// Queue tools with the memory and PostgreSQL backends (docs/mcp.md "Backends"): the running
// instance's Admin API, at the address and with the first token of the Spoolfile. Reads are tried
// up to three times on transport errors, 408, 429 and 5xx; mutations once. No environment proxy is
// used, and TLS is verified except on loopback. --admin-endpoint-allowlist is checked before
// anything is sent.
import http from "node:http";
import https from "node:https";
import { setTimeout as delay } from "node:timers/promises";
import { isLoopbackHost, type SpoolConfig } from "../../compiler/index.js";
import { ToolError } from "./tool.js";

const TIMEOUT_MS = 5000;
const READ_ATTEMPTS = 3;
const RETRY_PAUSE_MS = 100;

export interface AdminEndpoint {
  /** `http(s)://host:port{prefix}` */
  base: URL;
  token: string | undefined;
  tls: boolean;
}

/** The Admin API of the config: `0.0.0.0`, `::` and an empty host are reached at 127.0.0.1. */
export function adminEndpoint(config: SpoolConfig): AdminEndpoint {
  const { listen, prefix, tokens, tls } = config.adminApi;
  const unspecified = listen.host === "" || listen.host === "0.0.0.0" || listen.host === "::" || listen.host === "[::]";
  const host = unspecified ? "127.0.0.1" : listen.host.includes(":") && !listen.host.startsWith("[") ? `[${listen.host}]` : listen.host;
  const scheme = tls ? "https" : "http";
  return { base: new URL(`${scheme}://${host}:${listen.port}${prefix}`), token: tokens[0]?.value ?? undefined, tls: tls !== null };
}

/**
 * Entries `host:port` (the URL's host:port, any case) or `http(s)://host[:port][/path]` (same scheme
 * and host, the port when given, and a path prefix ending at a segment). A malformed entry refuses.
 */
export function checkAllowlist(allowlist: readonly string[], url: URL): void {
  if (allowlist.length === 0) return;
  for (const entry of allowlist) {
    const verdict = entryAllows(entry, url);
    if (verdict === "malformed") throw new ToolError(`admin endpoint allowlist entry ${JSON.stringify(entry)} is malformed; nothing was sent`);
    if (verdict) return;
  }
  throw new ToolError(`admin endpoint ${url.origin}${url.pathname} is not in --admin-endpoint-allowlist; nothing was sent`);
}

function entryAllows(entry: string, url: URL): boolean | "malformed" {
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  if (/^https?:\/\//i.test(entry)) {
    let allowed: URL;
    try {
      allowed = new URL(entry);
    } catch {
      return "malformed";
    }
    if (allowed.search || allowed.hash || allowed.username) return "malformed";
    if (allowed.protocol !== url.protocol || allowed.hostname !== url.hostname) return false;
    if (allowed.port && allowed.port !== url.port) return false;
    const prefix = allowed.pathname.replace(/\/+$/, "");
    return prefix === "" || url.pathname === prefix || url.pathname.startsWith(prefix + "/");
  }
  const match = /^(\[[^\]]+\]|[^:/\s]+):(\d{1,5})$/.exec(entry);
  if (!match) return "malformed";
  return match[1].toLowerCase() === url.hostname.toLowerCase() && match[2] === port;
}

export interface ProxyRequest {
  method: string;
  /** Under the admin prefix, with the query. */
  pathWithQuery: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Per attempt; default 5 s. */
  timeoutMs?: number;
}

export interface ProxyResponse {
  status: number;
  body: unknown;
}

/** Sends one request (reads retried); answers whatever status came back, throws ToolError on transport failure. */
export async function proxyRequest(endpoint: AdminEndpoint, allowlist: readonly string[], request: ProxyRequest): Promise<ProxyResponse> {
  const url = new URL(endpoint.base.href.replace(/\/$/, "") + request.pathWithQuery);
  checkAllowlist(allowlist, url);
  const attempts = request.method === "GET" ? READ_ATTEMPTS : 1;
  let last: ProxyResponse | Error | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (attempt > 1) await delay(RETRY_PAUSE_MS);
    try {
      last = await sendOnce(url, endpoint, request);
      if (!(last.status === 408 || last.status === 429 || last.status >= 500)) return last;
    } catch (error) {
      last = error as Error;
    }
  }
  if (last instanceof Error) throw new ToolError(`admin API ${url.origin} unreachable: ${last.message}`);
  return last!;
}

function sendOnce(url: URL, endpoint: AdminEndpoint, request: ProxyRequest): Promise<ProxyResponse> {
  const body = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
  const headers: Record<string, string> = { accept: "application/json", ...request.headers };
  if (endpoint.token !== undefined) headers.authorization = `Bearer ${endpoint.token}`;
  if (body) {
    headers["content-type"] = "application/json";
    headers["content-length"] = String(body.length);
  }
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: request.method,
        headers,
        timeout: request.timeoutMs ?? TIMEOUT_MS,
        agent: false,
        ...(url.protocol === "https:" ? { rejectUnauthorized: !isLoopbackHost(url.hostname.replace(/^\[|\]$/g, "")) } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          if (text !== "") {
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = text;
            }
          } else parsed = null;
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${(request.timeoutMs ?? TIMEOUT_MS) / 1000}s`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** An Admin error body as a tool error: `code=<c> [item_index=<n>] detail=<d>`. */
export function adminErrorMessage(status: number, body: unknown): string {
  if (body !== null && typeof body === "object" && typeof (body as { code?: unknown }).code === "string") {
    const { code, detail, item_index: itemIndex } = body as { code: string; detail?: unknown; item_index?: unknown };
    return `code=${code}${typeof itemIndex === "number" ? ` item_index=${itemIndex}` : ""} detail=${String(detail ?? "")}`;
  }
  return `code=http_${status} detail=${typeof body === "string" ? body.slice(0, 200) : "unexpected answer"}`;
}
