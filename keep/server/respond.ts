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
