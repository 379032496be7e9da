// Talking to the Admin API of a running `spool run` in end-to-end tests: a client that sends the
// admin token and, on mutations, the audit headers with a fresh X-Request-ID (so a test can find
// the audit line of exactly its request), and a reader for the audit lines in the process output.
import { createHash } from "node:crypto";
import { call, type Reply } from "./http.js";
import type { AuditFields } from "../../../runtime/admin/audit-record.js";

export interface AdminCall {
  method?: "GET" | "POST" | "PUT" | "DELETE" | "PATCH";
  /** JSON-encoded unless `rawBody` is given. */
  body?: unknown;
  rawBody?: string;
  /** X-Spool-Audit-Reason on mutations; default "e2e", null to omit. */
  reason?: string | null;
  actor?: string;
  /** X-Request-ID on mutations; default a fresh `e2e-N`, null to omit. */
  requestId?: string | null;
  /** Bearer token; default the suite's admin token, null to send none. */
  token?: string | null;
}

export interface AdminReply extends Reply {
  /** The X-Request-ID sent, when one was. */
  requestId?: string;
  /** The body bytes sent (for recomputing the audit input_hash). */
  sentBody: string;
}

export interface SentMutation {
  method: string;
  path: string;
  reply: AdminReply;
}

export interface AdminClient {
  (path: string, options?: AdminCall): Promise<AdminReply>;
  /** Every non-GET request this client sent, in order (to check that each one was audited). */
  readonly mutations: SentMutation[];
}

let requestCounter = 0;

export function adminClient(adminBase: string, token = "admin-token"): AdminClient {
  const mutations: SentMutation[] = [];
  const send = async (path: string, options: AdminCall = {}): Promise<AdminReply> => {
    const method = options.method ?? (options.body !== undefined || options.rawBody !== undefined ? "POST" : "GET");
    const headers: Record<string, string> = {};
    const sendToken = options.token === undefined ? token : options.token;
    if (sendToken !== null) headers.authorization = `Bearer ${sendToken}`;
    let requestId: string | undefined;
    if (method !== "GET") {
      headers["content-type"] = "application/json";
      const reason = options.reason === undefined ? "e2e" : options.reason;
      if (reason !== null) headers["x-spool-audit-reason"] = reason;
      if (options.actor !== undefined) headers["x-spool-audit-actor"] = options.actor;
      requestId = options.requestId === undefined ? `e2e-${process.pid}-${++requestCounter}` : (options.requestId ?? undefined);
      if (requestId !== undefined) headers["x-request-id"] = requestId;
    }
    const sentBody = options.rawBody ?? (options.body === undefined ? "" : JSON.stringify(options.body));
    const reply: AdminReply = { ...(await call(`${adminBase}${path}`, { method, headers, body: method === "GET" ? undefined : sentBody })), requestId, sentBody };
    if (method !== "GET") mutations.push({ method, path, reply });
    return reply;
  };
  return Object.assign(send, { mutations });
}

/** An Admin API audit line as read back from the log: the record's fields, metadata left open. */
export type AuditLine = AuditFields & { metadata: Record<string, unknown> & { kind: string } };

/** Audit lines are the JSON lines with both `tool` and `input_hash` (docs/decisions.md D29). */
export function auditLines(output: string): AuditLine[] {
  const lines: AuditLine[] = [];
  for (const line of output.split("\n")) {
    const start = line.indexOf("{");
    if (start < 0) continue;
    try {
      const record = JSON.parse(line.slice(start)) as Partial<AuditLine>;
      if (typeof record.tool === "string" && typeof record.input_hash === "string") lines.push(record as AuditLine);
    } catch {
      // not JSON, or the line is still being written
    }
  }
  return lines;
}

/** The hash the Admin API records: sha256 over "METHOD path?query\n" and the body bytes. */
export function expectedInputHash(method: string, pathWithQuery: string, body: string): string {
  return `sha256:${createHash("sha256").update(`${method} ${pathWithQuery}\n`).update(body).digest("hex")}`;
}

export const b64 = (text: string) => Buffer.from(text).toString("base64");

/** RFC 3339 of `minutes` ago (received_at values that order publish items deterministically). */
export const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
