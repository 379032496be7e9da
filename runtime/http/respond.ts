// The only writers of HTTP responses: JSON bodies, catalogue errors and empty replies.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApiError } from "../errors.js";
import { awaitsContinue } from "./body.js";
import { discardRequestBody, LINGER_LIMITS } from "./discard.js";

type Headers = Readonly<Record<string, string>>;

const NO_HEADERS: Headers = {};

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Headers = NO_HEADERS): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** sendJson for a body its caller has already serialised (the ingress 202). */
export function sendJsonText(res: ServerResponse, status: number, json: string, headers: Headers = NO_HEADERS): void {
  const bytes = Buffer.byteLength(json);
  if (!writeJsonHead(res, status, json, headers, bytes)) return;
  // As many bytes as characters: pure ASCII, whose Latin-1 bytes are its UTF-8 bytes, and Latin-1 is
  // a plain copy where UTF-8 encodes (a 45 KB dequeue reply is nearly all base64).
  if (bytes === json.length) res.end(json, "latin1");
  else res.end(json);
}

/**
 * Answers `{code, detail, item_index?}` with the error's status and headers. An error that left the
 * request body unread answers with `Connection: close` and closes in stages: the reply is written at
 * once, then up to LINGER_LIMITS of the unread body is read and dropped before the connection
 * closes, so a client still sending gets the reply instead of a reset. The body is never buffered.
 */
export function sendError(res: ServerResponse, error: ApiError): void {
  const req = res.req as IncomingMessage | undefined;
  if (!error.closeConnection || res.headersSent) {
    sendJson(res, error.status, error.toBody(), error.headers);
    return;
  }
  res.setHeader("Connection", "close");
  const payload = JSON.stringify(error.toBody());
  if (!writeJsonHead(res, error.status, payload, error.headers)) return;
  // A client still waiting for 100 Continue has sent no body, and will not: nothing to drain.
  if (!req || req.complete || awaitsContinue(req)) {
    res.end(payload);
    return;
  }
  // Node closes the socket as soon as a `Connection: close` reply ends, so the reply is written now
  // and ended only after the staged read; its Content-Length tells the client it is complete.
  res.write(payload);
  void discardRequestBody(req, LINGER_LIMITS).then(() => {
    if (!res.writableEnded) res.end();
  });
}

export function sendEmpty(res: ServerResponse, status = 204, headers: Headers = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (status !== 204 && status !== 304) res.setHeader("Content-Length", 0);
  res.end();
}

/**
 * Writes status and headers of a JSON reply whose body is `payload`; false (and the socket
 * destroyed) when a reply was already started. Every reply of the service passes here (each ingress
 * 202): one writeHead with the whole header list costs less than a setHeader per header, and a
 * string body is joined to the head in one chunk where a Buffer would be a chunk of its own.
 * Headers set earlier (Connection: close) stay.
 */
function writeJsonHead(res: ServerResponse, status: number, payload: string, headers: Headers, bytes = Buffer.byteLength(payload)): boolean {
  if (res.headersSent) {
    res.destroy();
    return false;
  }
  const head: string[] = [];
  if (headers !== NO_HEADERS) for (const name of Object.keys(headers)) head.push(name, headers[name]);
  head.push("Content-Type", "application/json", "Content-Length", String(bytes));
  res.writeHead(status, head);
  return true;
}
