// HTTP to the Pull API through one undici Agent (pooled keep-alive connections): JSON in, the
// status and JSON out, or the response body as a stream for SSE. Failures to get an answer become
// PullError status 0; answers that carry a Pull API error become PullError with its code.
import { Agent, request, type Dispatcher } from "undici";
import { isAbort, PullError } from "./errors.js";

export interface TransportOptions {
  /** The Pull API base: scheme, host, port and `pull_api.prefix` (`http://127.0.0.1:9443/pull`). */
  url: string;
  token: string;
  /** How long to wait for a response's headers before giving up (ms; long polls add their wait). */
  timeoutMs: number;
  /** An undici dispatcher to use instead of the client's own Agent (TLS options, proxies). */
  dispatcher?: Dispatcher;
}

export interface JsonAnswer {
  status: number;
  body: any;
}

export class Transport {
  private readonly base: string;
  private readonly authorization: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownDispatcher: Agent | undefined;

  constructor(private readonly options: TransportOptions) {
    this.base = options.url.replace(/\/+$/, "");
    this.authorization = `Bearer ${options.token}`;
    this.ownDispatcher = options.dispatcher ? undefined : new Agent({ keepAliveTimeout: 4_000, connections: 64 });
    this.dispatcher = options.dispatcher ?? this.ownDispatcher!;
  }

  /** POST `path` with a JSON body; 2xx and 409 answer (409 carries lease conflicts), others throw PullError. */
  async post(path: string, body: unknown, options: { signal?: AbortSignal; extraWaitMs?: number } = {}): Promise<JsonAnswer> {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(this.base + path, {
        method: "POST",
        headers: { authorization: this.authorization, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: options.signal,
        dispatcher: this.dispatcher,
        headersTimeout: this.options.timeoutMs + (options.extraWaitMs ?? 0),
        bodyTimeout: this.options.timeoutMs,
      });
    } catch (error) {
      throw networkError(error);
    }
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      throw networkError(error);
    }
    const json = text === "" ? undefined : safeJson(text);
    if (response.statusCode < 300 || response.statusCode === 409) return { status: response.statusCode, body: json };
    throw answerError(response.statusCode, json, response.headers);
  }

  /** GET `path` as a stream: the body once the answer is 200, otherwise PullError. */
  async stream(path: string, options: { signal?: AbortSignal; idleTimeoutMs: number }): Promise<AsyncIterable<Uint8Array>> {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(this.base + path, {
        method: "GET",
        headers: { authorization: this.authorization, accept: "text/event-stream" },
        signal: options.signal,
        dispatcher: this.dispatcher,
        headersTimeout: this.options.timeoutMs,
        // No byte for this long (keepalives included) means the connection is gone.
        bodyTimeout: options.idleTimeoutMs,
      });
    } catch (error) {
      throw networkError(error);
    }
    if (response.statusCode !== 200) {
      const text = await response.body.text().catch(() => "");
      throw answerError(response.statusCode, safeJson(text), response.headers);
    }
    return guarded(response.body);
  }

  async close(): Promise<void> {
    await this.ownDispatcher?.close();
  }
}

/** The body's chunks, with a failure mid-stream as a PullError (an abort stays an abort). */
async function* guarded(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body) yield chunk;
  } catch (error) {
    throw networkError(error);
  }
}

function networkError(error: unknown): unknown {
  if (isAbort(error) || error instanceof PullError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new PullError(0, "network", message, { cause: error });
}

function answerError(status: number, json: any, headers: Record<string, string | string[] | undefined>): PullError {
  const retryAfter = Number(headers["retry-after"]);
  const code = typeof json?.code === "string" ? json.code : `http_${status}`;
  const detail = typeof json?.detail === "string" ? json.detail : `HTTP ${status}`;
  return new PullError(status, code, detail, Number.isFinite(retryAfter) ? { retryAfterMs: retryAfter * 1000 } : {});
}

function safeJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
