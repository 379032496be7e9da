// node:http listeners with explicit timeouts, a catch-all for handler failures and graceful close.
import { createServer, ServerResponse, type IncomingMessage, type Server, type ServerOptions } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { apiError, toApiError, type ApiError } from "../errors.js";
import { parseListenAddress, type BindAddress } from "./address.js";
import { ClientGoneError, deferContinue, failBody } from "./body.js";
import { sendError } from "./respond.js";
import type { ListenerTls } from "./tls.js";

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface HttpServerOptions {
  /** Time to receive the complete request headers; slowloris clients are cut off here (408 + close). */
  headersTimeoutMs: number;
  /** Time to receive the complete request (headers and body); 0 disables. Long-poll replies are not limited by it. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept open. */
  keepAliveTimeoutMs: number;
  /** Largest header block Node's parser accepts (431 beyond it); route `max_headers` is checked separately. */
  maxHeaderSize: number;
  /** Called with failures that are not ApiErrors (they are answered as 500 internal_error). */
  onUnexpectedError?: (error: unknown, req: IncomingMessage) => void;
  /** Called with each refusal the parser answers before any handler runs (malformed, headers over maxHeaderSize, timeout). */
  onClientError?: (status: number, code: string) => void;
  /** Called with each request the server answers itself, before any handler (no Host, an unsupported Expect): for the access log. */
  onServerAnswer?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Serve HTTPS with this certificate and client policy (http/tls.ts); plain HTTP without. */
  tls?: ListenerTls;
}

export interface HttpListener {
  readonly server: Server;
  /** Bound address, with the real port when 0 was asked for. */
  readonly address: { host: string; port: number; family: string };
  /**
   * Stops accepting, lets in-flight requests finish until `deadlineMs` has passed, then cuts the
   * remaining connections. Idle keep-alive sockets are closed at once and busy ones after their
   * current reply.
   */
  close(deadlineMs: number): Promise<void>;
  /** Changes the parser's limit on a request's header block for connections opened from now on (reload). */
  setMaxHeaderSize(bytes: number): void;
  /**
   * A TLS listener takes the certificate and key (and CA) read again, for handshakes from now on:
   * a renewed certificate is served after a reload, without a restart. Throws on a plain listener.
   */
  refreshTls(next: ListenerTls): void;
}

export interface SpoolHttpServer {
  readonly server: Server;
  /** True once close has begun; handlers can answer 503 or end long-polls early. */
  readonly closing: boolean;
  /** Aborted when close begins: pass it to long-polls so they answer at once with empty items (docs/decisions.md D54). */
  readonly shutdownSignal: AbortSignal;
  listen(address: string | BindAddress): Promise<HttpListener>;
}

/** What the server answers for a parser error: on its own, or (bodyDetail) through the handler of a request whose body broke. */
function parserRefusal(errorCode: string | undefined, maxHeaderSize: number) {
  if (errorCode === "HPE_HEADER_OVERFLOW") {
    return { status: 413, reason: "Payload Too Large", code: "headers_too_large", detail: `request headers exceed ${maxHeaderSize} bytes`, bodyDetail: `request trailers exceed ${maxHeaderSize} bytes` } as const;
  }
  if (errorCode === "ERR_HTTP_REQUEST_TIMEOUT") {
    return { status: 408, reason: "Request Timeout", code: "request_timeout", detail: "request not received in time", bodyDetail: "the request body was not received in time" } as const;
  }
  return { status: 400, reason: "Bad Request", code: "bad_request", detail: "malformed HTTP request", bodyDetail: "the request body could not be read: malformed HTTP" } as const;
}

/**
 * What Node's parser lets through but a server must refuse (RFC 9112): an HTTP/1.1 request without
 * Host, or with two (§3.2: which one names the target?), and a transfer coding other than chunked
 * (§6.1). Answered before any handler, the connection closed after (the body is not read).
 */
function framingRefusal(req: IncomingMessage): ApiError | undefined {
  if (req.httpVersion === "1.1" && req.headers.host === undefined) return apiError("bad_request", "an HTTP/1.1 request needs a Host header", { closeConnection: true });
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].length === 4 && req.rawHeaders[i].toLowerCase() === "host") hosts++;
  if (hosts > 1) return apiError("bad_request", "a request has one Host header", { closeConnection: true });
  const codings = req.headers["transfer-encoding"];
  if (codings !== undefined && codings.split(",").some((coding) => coding.trim().toLowerCase() !== "chunked")) {
    return apiError("unsupported_transfer_coding", `unsupported Transfer-Encoding ${JSON.stringify(codings.slice(0, 100))}; only chunked is accepted`, { closeConnection: true });
  }
  return undefined;
}

/** How long a handler has to answer a request whose body the parser gave up on (clientError). */
const BROKEN_BODY_GRACE_MS = 5_000;

/** How long the 503s written at the close deadline get to reach their clients. */
const REPLY_GRACE_MS = 250;

export function createHttpServer(handler: RequestHandler, options: HttpServerOptions): SpoolHttpServer {
  let closing = false;
  /**
   * Each connection's latest response not yet closed: a parser refusal on that connection waits for
   * it (clientError), and close() tells it to close its connection and answers 503 at the deadline.
   */
  const inFlight = new Map<Socket, ServerResponse>();
  const shutdown = new AbortController();
  // Node checks the headers/request timeouts on this interval (default 30 s), which would let a
  // slow client hold a socket far beyond headersTimeoutMs.
  const connectionsCheckingInterval = Math.max(50, Math.min(1_000, Math.floor(options.headersTimeoutMs / 4)));
  const httpOptions: ServerOptions = {
    headersTimeout: options.headersTimeoutMs,
    requestTimeout: options.requestTimeoutMs,
    keepAliveTimeout: options.keepAliveTimeoutMs,
    maxHeaderSize: options.maxHeaderSize,
    connectionsCheckingInterval,
    // Checked in the listener below, so the refusal is JSON like every other (Node's own 400 has no body).
    requireHostHeader: false,
  };
  // An https.Server is an http.Server behind a TLS handshake: the same requests, events and
  // timeouts, so the rest of this module handles both alike (hence the cast to the http type).
  let tls = options.tls;
  const server: Server = tls ? (createHttpsServer({ ...httpOptions, ...tls.options }, listener) as unknown as Server) : createServer(httpOptions, listener);
  if (tls) {
    server.on("secureConnection", (socket: TLSSocket) => {
      if (!tls!.admits(socket)) socket.destroy();
    });
    // A failed handshake (plain HTTP sent to this port, an untrusted client certificate) ends
    // there; the event only needs a listener so that it is not reported as unhandled.
    server.on("tlsClientError", (_error: Error, socket: TLSSocket) => socket.destroy());
  }
  function listener(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    inFlight.set(socket, res);
    res.once("close", () => inFlight.get(socket) === res && inFlight.delete(socket));
    const refusal = framingRefusal(req);
    if (refusal) {
      options.onClientError?.(refusal.status, refusal.code);
      options.onServerAnswer?.(req, res);
      // A body in a coding the parser cannot frame is not drained (it would reject it as it comes):
      // that reply ends at once. Other refusals drain a small body first, as every refusal does.
      if (refusal.code === "unsupported_transfer_coding") failBody(req, refusal);
      sendError(res, refusal);
      return;
    }
    // A connection that outlives close() must not carry another request.
    if (closing) res.setHeader("Connection", "close");
    let outcome: void | Promise<void>;
    try {
      outcome = handler(req, res);
    } catch (error) {
      answerFailure(error, req, res);
      return;
    }
    if (outcome && typeof outcome.then === "function") {
      outcome.then(undefined, (error: unknown) => answerFailure(error, req, res));
    }
  }
  // Expect: 100-continue: the interim 100 waits until the handler reads the body (http/body.ts),
  // so a request refused before that (a declared body over the limit) never invites its upload.
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    deferContinue(req, res);
    listener(req, res);
  });
  // An Expect other than 100-continue: 417 as Node would answer it, but with a JSON body.
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
    options.onClientError?.(417, "expectation_failed");
    options.onServerAnswer?.(req, res);
    sendError(res, apiError("expectation_failed", `unsupported Expect: ${String(req.headers.expect).slice(0, 100)}`, { closeConnection: true }));
  });
  // CONNECT never reaches the request listener (Node hands over the raw socket, and without this
  // listener closes it unanswered). It goes through the same routing as any other method, on a
  // response bound to the socket, so it gets the route's 405 with Allow, or 404.
  server.on("connect", (req: IncomingMessage, socket: Socket) => {
    const res = new ServerResponse(req);
    res.assignSocket(socket);
    res.setHeader("Connection", "close");
    res.once("finish", () => socket.destroySoon());
    listener(req, res);
  });
  // Node keeps the maxHeaderSize option as a property of the server and reads it for each new
  // connection's parser (lib/_http_server.js); it is not in the typings, hence this typed view.
  const parserOptions = server as unknown as { maxHeaderSize: number };
  // No count limit on header lines: Node keeps only the first 2000 raw entries (1000 headers) by
  // default and drops the rest silently, so a request's stored headers lost data and max_headers
  // never saw the bytes past them. maxHeaderSize (parser) and max_headers (route) bound the size.
  server.maxHeadersCount = 0;
  // headersTimeout must not exceed requestTimeout in Node; requestTimeout 0 means "off".
  server.headersTimeout = options.headersTimeoutMs;

  // Parser-level refusals answer before any handler runs. A header block over maxHeaderSize is 413
  // headers_too_large, the status the catalogue gives max_headers (docs/decisions.md D10), not
  // Node's 431; a slow client cut off by headersTimeout gets 408.
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || socket.destroyed) return;
    // A request already answered (a refusal sent while its body still arrives) whose body then
    // breaks off, by a reset or a hang-up mid-body, is no new request: no second refusal, no count.
    const answered = inFlight.get(socket);
    if (err.code === "ECONNRESET" || err.code === "EPIPE") {
      socket.destroy();
      return;
    }
    if (answered?.headersSent && !answered.req.complete) {
      // The reply may still be on its way out (a framing refusal whose body the parser then
      // rejected): let it flush, then close.
      socket.destroySoon();
      return;
    }
    const { status, reason, code, detail, bodyDetail } = parserRefusal(err.code, parserOptions.maxHeaderSize);
    // The parser gave up inside the body of the request in flight (chunking that does not parse,
    // the request timeout, a half-close midway): that body will never end, so its handler, which
    // reads it or will, answers the refusal (and counts it, once); the connection closes after.
    // Waiting for that handler's answer instead, as below, would wait forever, holding the socket.
    if (answered && !answered.headersSent && !answered.req.complete && !answered.destroyed) {
      // Whatever the handler answers, even one that never reads the body, closes the connection:
      // the parser will read nothing more on it.
      answered.setHeader("Connection", "close");
      failBody(answered.req, apiError(code, bodyDetail, { closeConnection: true }));
      // A handler that never reads the body must not keep the connection either.
      setTimeout(() => answered.writableFinished || socket.destroy(), BROKEN_BODY_GRACE_MS).unref();
      return;
    }
    options.onClientError?.(status, code);
    const body = JSON.stringify({ code, detail });
    const refuse = () => {
      if (!socket.writable || socket.destroyed) return;
      socket.end(
        `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      socket.destroySoon();
    };
    // Bytes that fail to parse after a complete request on the same connection (pipelined junk)
    // must not cut off that request's answer: it may already be stored, and its client must get its
    // 202 before the refusal of what followed.
    if (answered && !answered.writableFinished && !answered.destroyed) {
      answered.once("finish", refuse);
      answered.once("close", refuse);
    } else refuse();
  });

  function answerFailure(error: unknown, req: IncomingMessage, res: ServerResponse): void {
    if (error instanceof ClientGoneError) {
      res.destroy();
      return;
    }
    const apiErr = toApiError(error);
    if (apiErr.code === "internal_error") options.onUnexpectedError?.(error, req);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendError(res, apiErr);
  }

  async function listen(address: string | BindAddress): Promise<HttpListener> {
    const { host, port } = typeof address === "string" ? parseListenAddress(address) : address;
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      server.once("error", onError);
      server.listen({ host, port }, () => {
        server.off("error", onError);
        resolve();
      });
    });
    const bound = server.address();
    if (bound === null || typeof bound === "string") throw new Error("server is not bound to a TCP address");
    return {
      server,
      address: { host: bound.address, port: bound.port, family: bound.family },
      close: (deadlineMs) => close(deadlineMs),
      setMaxHeaderSize: (bytes) => void (parserOptions.maxHeaderSize = bytes),
      refreshTls: (next) => {
        if (!tls) throw new Error("not a TLS listener");
        (server as unknown as HttpsServer).setSecureContext(next.options);
        tls = next;
      },
    };
  }

  async function close(deadlineMs: number): Promise<void> {
    closing = true;
    // Replies not yet begun close their connection after them: none advertises keep-alive to a
    // client whose next request would find the socket gone.
    for (const res of inFlight.values()) if (!res.headersSent) res.setHeader("Connection", "close");
    shutdown.abort(new Error("server is shutting down"));
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    // A busy keep-alive socket becomes idle after its reply; close it then, not at the deadline.
    // Requests arriving meanwhile are answered with Connection: close (see the request listener).
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const deadline = new Promise<"deadline">((resolve) => setTimeout(() => resolve("deadline"), Math.max(0, deadlineMs)).unref());
    const first = await Promise.race([closed.then(() => "closed" as const), deadline]);
    clearInterval(sweep);
    if (first === "deadline") {
      await answerUnfinished();
      server.closeAllConnections();
      await closed;
    }
  }

  /**
   * At the close deadline, a request still being received gets 503 shutting_down rather than a
   * connection closed without a word (ingress then stores nothing of it, even if its body completes
   * in the grace period). The reply is a closing one (sendError's staged close drains the unread
   * body), so the client reads it before the connection goes.
   */
  async function answerUnfinished(): Promise<void> {
    // Only requests whose body has not fully arrived: a complete one may be in the middle of its
    // store write, and a 503 must never be the answer to a message that then gets stored.
    const unanswered = [...inFlight.values()].filter((res) => !res.headersSent && !res.destroyed && !res.req.complete);
    if (unanswered.length === 0) return;
    const written = unanswered.map((res) => {
      const closed = new Promise((resolve) => res.once("close", resolve));
      sendError(res, apiError("shutting_down", "the server is shutting down; retry the request", { closeConnection: true }));
      return closed;
    });
    await Promise.race([Promise.all(written), new Promise((resolve) => setTimeout(resolve, REPLY_GRACE_MS).unref())]);
  }

  return {
    server,
    get closing() {
      return closing;
    },
    shutdownSignal: shutdown.signal,
    listen,
  };
}
