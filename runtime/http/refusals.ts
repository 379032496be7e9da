// What the server refuses before any handler runs: requests Node's parser lets through but a
// server must not serve (framingRefusal), and the parser's own refusals (the clientError event).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { apiError, type ApiError } from "../errors.js";
import { failBody } from "./body.js";

/**
 * What Node's parser lets through but a server must refuse (RFC 9112): an HTTP/1.1 request without
 * Host, or with two (§3.2: which one names the target?), and a transfer coding other than chunked
 * (§6.1). Answered before any handler, the connection closed after (the body is not read).
 */
export function framingRefusal(req: IncomingMessage): ApiError | undefined {
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

/** How long a handler has to answer a request whose body the parser gave up on (clientError). */
const BROKEN_BODY_GRACE_MS = 5_000;

/**
 * The server's clientError listener. A header block over maxHeaderSize is 413 headers_too_large,
 * the status the catalogue gives max_headers (docs/decisions.md D10), not Node's 431; a slow client
 * cut off by headersTimeout gets 408. `inFlight` holds each connection's latest response not yet
 * closed (runtime/http/server.ts).
 */
export function clientErrorListener(
  inFlight: ReadonlyMap<Socket, ServerResponse>,
  maxHeaderSize: () => number,
  onClientError: ((status: number, code: string) => void) | undefined,
) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
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
    const { status, reason, code, detail, bodyDetail } = parserRefusal(err.code, maxHeaderSize());
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
    onClientError?.(status, code);
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
  };
}
