// The only writers of HTTP responses: JSON bodies, catalogue errors and empty replies.
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { ApiError } from "../errors.js";

type Headers = Readonly<Record<string, string>>;

const NO_HEADERS: Headers = {};

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Headers = NO_HEADERS): void {
  const payload = JSON.stringify(body);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // Every reply of the service passes here (each ingress 202): one writeHead with the whole header
  // list costs less than a setHeader per header, and a string body is joined to the head in one
  // chunk where a Buffer would be a chunk of its own. Headers set earlier (Connection: close) stay.
  const head: string[] = [];
  for (const name of Object.keys(headers)) head.push(name, headers[name]);
  head.push("Content-Type", "application/json", "Content-Length", String(Buffer.byteLength(payload)));
  res.writeHead(status, head);
  res.end(payload);
}

/**
 * Answers `{code, detail, item_index?}` with the error's status and headers. An error that left
 * the request body unread closes the connection after the reply, so the unread bytes are dropped
 * instead of being drained or parsed as another request.
 */
export function sendError(res: ServerResponse, error: ApiError): void {
  if (error.closeConnection && !res.headersSent) {
    res.setHeader("Connection", "close");
    const socket = res.socket;
    if (socket) res.once("finish", () => closeAfterReply(socket));
  }
  sendJson(res, error.status, error.toBody(), error.headers);
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

// Half-close first so the reply reaches the client before the socket goes away; then stop reading.
// Destroying at once can turn the unread upload into a TCP reset that discards the 413 on the
// client side.
function closeAfterReply(socket: Socket): void {
  if (socket.destroyed) return;
  socket.end();
  const timer = setTimeout(() => socket.destroy(), 2_000);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
}
