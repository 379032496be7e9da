// node:http listeners with explicit timeouts, a catch-all for handler failures and graceful close
// (close.ts); what is refused before any handler runs is in refusals.ts.
import { createServer, ServerResponse, type IncomingMessage, type Server, type ServerOptions } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { apiError, toApiError } from "../errors.js";
import { parseListenAddress, type BindAddress } from "./address.js";
import { ClientGoneError, deferContinue, failBody } from "./body.js";
import { closeAfterReplies, closeGracefully } from "./close.js";
import { clientErrorListener, framingRefusal } from "./refusals.js";
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

/** The timeouts every listener has unless told otherwise. */
export const DEFAULT_HTTP_TIMEOUTS: Pick<HttpServerOptions, "headersTimeoutMs" | "requestTimeoutMs" | "keepAliveTimeoutMs"> = {
  // A client has 10 s to send its headers (slowloris), a minute for the whole request; idle
  // keep-alive connections go after 5 s.
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
};

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

/**
 * Each connection's latest response not yet closed: a parser refusal on that connection waits for
 * it (clientError), and close() tells it to close its connection and answers 503 at the deadline.
 */
type InFlight = Map<Socket, ServerResponse>;

export function createHttpServer(handler: RequestHandler, options: HttpServerOptions): SpoolHttpServer {
  let closing = false;
  const inFlight: InFlight = new Map();
  const shutdown = new AbortController();
  const listener = requestListener(handler, options, inFlight, () => closing);
  const { server, refreshTls } = nodeServer(options, listener);
  routeSpecialRequests(server, listener, options);
  // Node keeps the maxHeaderSize option as a property of the server and reads it for each new
  // connection's parser (lib/_http_server.js); it is not in the typings, hence this typed view.
  const parserOptions = server as unknown as { maxHeaderSize: number };
  // No count limit on header lines: Node keeps only the first 2000 raw entries (1000 headers) by
  // default and drops the rest silently, so a request's stored headers lost data and max_headers
  // never saw the bytes past them. maxHeaderSize (parser) and max_headers (route) bound the size.
  server.maxHeadersCount = 0;
  // headersTimeout must not exceed requestTimeout in Node; requestTimeout 0 means "off".
  server.headersTimeout = options.headersTimeoutMs;
  // Parser-level refusals answer before any handler runs (refusals.ts).
  server.on("clientError", clientErrorListener(inFlight, () => parserOptions.maxHeaderSize, options.onClientError));
  const connections = trackConnections(server, options.tls !== undefined && options.tls !== null);

  async function close(deadlineMs: number): Promise<void> {
    closing = true;
    closeAfterReplies(inFlight);
    shutdown.abort(new Error("server is shutting down"));
    dropConnectionsWithoutRequest(connections, inFlight);
    await closeGracefully(server, inFlight, deadlineMs);
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
      refreshTls,
    };
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

/** The node:http (or node:https) server with the options' timeouts; `refreshTls` swaps a TLS listener's certificate. */
function nodeServer(options: HttpServerOptions, listener: (req: IncomingMessage, res: ServerResponse) => void): { server: Server; refreshTls(next: ListenerTls): void } {
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
  const refreshTls = (next: ListenerTls): void => {
    if (!tls) throw new Error("not a TLS listener");
    (server as unknown as HttpsServer).setSecureContext(next.options);
    tls = next;
  };
  return { server, refreshTls };
}

/** Every open connection (for HTTPS, once its handshake is done: the socket requests arrive on). */
function trackConnections(server: Server | HttpsServer, tls: boolean): ReadonlySet<Socket> {
  const open = new Set<Socket>();
  server.on(tls ? "secureConnection" : "connection", (socket: Socket) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  });
  return open;
}

/**
 * At close, a connection with no request being handled has nothing to finish: one opened and left
 * silent (or still sending its headers) would otherwise hold the stop until the drain deadline, as
 * Node's closeIdleConnections only closes connections that have answered a request.
 */
function dropConnectionsWithoutRequest(open: ReadonlySet<Socket>, inFlight: InFlight): void {
  for (const socket of open) if (!inFlight.has(socket)) socket.destroy();
}

/** Every request's way in: framing refusals, then the handler, its failures answered. */
function requestListener(handler: RequestHandler, options: HttpServerOptions, inFlight: InFlight, closing: () => boolean) {
  // One function for every response, not a closure per request; 'close' is emitted once.
  function forgetInFlight(this: ServerResponse): void {
    const socket = this.req.socket;
    if (inFlight.get(socket) === this) inFlight.delete(socket);
  }
  return function listener(req: IncomingMessage, res: ServerResponse): void {
    inFlight.set(req.socket, res);
    res.on("close", forgetInFlight);
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
    if (closing()) res.setHeader("Connection", "close");
    let outcome: void | Promise<void>;
    try {
      outcome = handler(req, res);
    } catch (error) {
      answerFailure(error, req, res, options);
      return;
    }
    if (outcome && typeof outcome.then === "function") {
      outcome.then(undefined, (error: unknown) => answerFailure(error, req, res, options));
    }
  };
}

function answerFailure(error: unknown, req: IncomingMessage, res: ServerResponse, options: HttpServerOptions): void {
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

/** Requests node:http hands over by events of their own rather than to the request listener. */
function routeSpecialRequests(server: Server, listener: (req: IncomingMessage, res: ServerResponse) => void, options: HttpServerOptions): void {
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
}
