// JSON responses and the error shape `{"error":{"code":"…","message":"…"}}`. Messages are fixed
// texts chosen by the server: they never echo a value, a token or a request body.
import type { IncomingMessage, ServerResponse } from "node:http";

export type ErrorCode = "bad_request" | "unauthorized" | "forbidden" | "not_found" | "audit_unavailable" | "internal_error";

const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  audit_unavailable: 503,
  internal_error: 500,
};

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body), "utf8");
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": bytes.length,
    "Cache-Control": "no-store",
  });
  res.end(bytes);
}

export function sendError(res: ServerResponse, code: ErrorCode, message: string): void {
  if (code === "unauthorized") res.setHeader("WWW-Authenticate", "Bearer");
  sendJson(res, STATUS[code], { error: { code, message } });
}

export class BodyTooLarge extends Error {}

/** The request body, or BodyTooLarge beyond `limit` bytes (the rest is drained, not kept). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on("end", () => (tooLarge ? reject(new BodyTooLarge()) : resolve(Buffer.concat(chunks))));
    req.on("error", reject);
  });
}

/** How long a body the route does not use may take to arrive before the answer goes out anyway. */
export const DRAIN_WAIT_MS = 2_000;

/**
 * Reads and discards a request body the route does not use, so the keep-alive connection stays
 * usable; beyond `limit` bytes, or when the rest has not arrived within `waitMs`, the connection is
 * closed after the answer instead. So a client that sends its body slowly (or never finishes it) gets
 * its answer, a 401 included, at once rather than when the server's request timeout ends it.
 */
export function drainBody(req: IncomingMessage, res: ServerResponse, limit: number, waitMs = DRAIN_WAIT_MS): Promise<void> {
  if (req.complete || (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined)) return Promise.resolve();
  return new Promise((resolve) => {
    let size = 0;
    const timer = setTimeout(() => {
      res.setHeader("Connection", "close");
      done();
    }, waitMs);
    timer.unref();
    const done = (): void => {
      clearTimeout(timer);
      req.off("data", onData);
      resolve();
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        res.setHeader("Connection", "close");
        done();
      }
    };
    req.on("data", onData);
    req.once("end", done);
    req.once("error", done);
  });
}

/** The answer to a request Node's HTTP parser rejected (after TLS): JSON like every other error. */
export function answerMalformed(error: NodeJS.ErrnoException, socket: { writable: boolean; end(data: string): void; destroy(): void }): void {
  if (!socket.writable || error.code === "ECONNRESET") return socket.destroy();
  const body = JSON.stringify({ error: { code: "bad_request", message: "malformed HTTP request" } });
  socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
