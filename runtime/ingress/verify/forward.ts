// `auth forward "<url>"`: ask an external service whether to accept the webhook
// (docs/spoolfile.md "Ingress auth"; docs/api.md "Ingress"): 2xx allows and copies the named response
// headers into the stored message, 401/403 deny with that status, anything else fails closed (503).
import { request as undiciRequest, type Dispatcher } from "undici";
import type { RequestHeaders } from "../../auth/types.js";

export interface ForwardAuthOptions {
  timeoutMs: number;
  /** Response headers copied into the message's stored headers on success. */
  copyHeaders: readonly string[];
  /** At most this many body bytes are forwarded (a prefix); 0 forwards no body. */
  bodyLimitBytes: number;
  /** For tests or a shared connection pool; undici's global dispatcher otherwise. */
  dispatcher?: Dispatcher;
  /** Aborts the check (client gone, shutdown); counted as unavailable. */
  signal?: AbortSignal;
}

export interface ForwardAuthRequest {
  method: string;
  path: string;
  headers: RequestHeaders;
  body: Buffer;
}

export type ForwardAuthResult =
  | { ok: true; copiedHeaders: Record<string, string> }
  | { ok: false; status: 401 | 403 | 503; reason: "denied" | "forbidden" | "unavailable"; /** Why, for an unavailable service (the runtime log). */ detail?: string };

// Connection-level headers describe the inbound hop, not the request being authorised.
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "host",
  "content-length",
]);

const MAX_DRAINED_RESPONSE_BYTES = 4096;

export async function forwardAuth(url: string, options: ForwardAuthOptions, inbound: ForwardAuthRequest): Promise<ForwardAuthResult> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(inbound.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name.toLowerCase())) continue;
    headers[name] = value;
  }
  headers["x-spool-original-method"] = inbound.method;
  headers["x-spool-original-path"] = inbound.path;
  const method = inbound.method.toUpperCase();
  const sendsBody = method !== "GET" && method !== "HEAD" && options.bodyLimitBytes > 0;
  const body = sendsBody ? inbound.body.subarray(0, options.bodyLimitBytes) : undefined;

  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  try {
    const response = await undiciRequest(url, {
      method: method as Dispatcher.HttpMethod,
      headers,
      body,
      signal,
      dispatcher: options.dispatcher,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    } as Parameters<typeof undiciRequest>[1]);
    await drain(response.body);
    const status = response.statusCode;
    if (status >= 200 && status < 300) {
      const copiedHeaders: Record<string, string> = {};
      for (const name of options.copyHeaders) {
        const value = response.headers[name.toLowerCase()];
        if (value === undefined) continue;
        copiedHeaders[name] = Array.isArray(value) ? value.join(",") : value;
      }
      return { ok: true, copiedHeaders };
    }
    if (status === 401) return { ok: false, status: 401, reason: "denied" };
    if (status === 403) return { ok: false, status: 403, reason: "forbidden" };
    return { ok: false, status: 503, reason: "unavailable", detail: `the auth service answered ${status}` };
  } catch (error) {
    // Network error, timeout or abort: fail closed.
    return { ok: false, status: 503, reason: "unavailable", detail: (error as Error).message };
  }
}

async function drain(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<void> {
  let seenBytes = 0;
  for await (const chunk of body) {
    seenBytes += chunk.length;
    if (seenBytes > MAX_DRAINED_RESPONSE_BYTES) {
      body.destroy();
      return;
    }
  }
}
