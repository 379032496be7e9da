// Push/exec end-to-end helpers: a local receiver that records every connection and request, and
// Admin API reads of the attempts and dead letters a delivery leaves behind.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { eventually } from "./http.js";

export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: Buffer;
  /** performance.now() when the request's body had arrived. */
  readonly atMs: number;
}

/** Answers one request; the default answers 200. A handler that never ends the response holds it. */
export type Respond = (request: ReceivedRequest, res: ServerResponse) => void;

export interface Receiver {
  readonly port: number;
  /** `http://<host>:<port><path>`, the host bracketed when it is IPv6. */
  url(path: string): string;
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted so far: a refused egress target must stay at 0. */
  connections(): number;
  close(): Promise<void>;
}

export async function startReceiver(host = "127.0.0.1", respond: Respond = (_, res) => res.end()): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request = { path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks), atMs: performance.now() };
      requests.push(request);
      respond(request, res);
    });
  });
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const hostPart = host.includes(":") ? `[${host}]` : host;
  return {
    port,
    url: (path) => `http://${hostPart}:${port}${path}`,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections(); // held requests must not keep the server open
        server.close(() => resolve());
      }),
  };
}

export interface AttemptItem {
  event_id: string;
  route: string;
  target: string;
  attempt: number;
  outcome: "acked" | "retry" | "dead";
  status_code?: number;
  error?: string;
  dead_reason?: string;
}

export interface DeadItem {
  id: string;
  route: string;
  target: string;
  attempt: number;
  dead_reason: string;
}

const adminHeaders = { authorization: "Bearer admin-token" };

async function adminItems<T>(adminBase: string, pathAndQuery: string): Promise<T[]> {
  const response = await fetch(`${adminBase}${pathAndQuery}`, { headers: adminHeaders });
  if (response.status !== 200) throw new Error(`GET ${pathAndQuery} answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { items: T[] }).items;
}

/** The attempt records of one message, oldest first. */
export async function attemptsOf(adminBase: string, route: string, eventId: string): Promise<AttemptItem[]> {
  const items = await adminItems<AttemptItem>(adminBase, `/attempts?route=${encodeURIComponent(route)}&event_id=${encodeURIComponent(eventId)}`);
  return items.sort((a, b) => a.attempt - b.attempt);
}

/** Waits until the message has at least `count` attempt records; returns them oldest first. */
export function waitForAttempts(adminBase: string, route: string, eventId: string, count: number, what: string, timeoutMs = 15_000): Promise<AttemptItem[]> {
  return eventually(async () => {
    const attempts = await attemptsOf(adminBase, route, eventId);
    return attempts.length >= count ? attempts : undefined;
  }, timeoutMs, what);
}

/** Waits until the message is in the DLQ and returns its dead-letter item. */
export function waitForDead(adminBase: string, route: string, eventId: string, timeoutMs = 15_000): Promise<DeadItem> {
  return eventually(async () => (await adminItems<DeadItem>(adminBase, `/dlq?route=${encodeURIComponent(route)}`)).find((item) => item.id === eventId), timeoutMs, `${eventId} in the DLQ of ${route}`);
}

/** POSTs to an ingress route and returns the stored message ids (202 expected). */
export async function postWebhook(ingressBase: string, route: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<string[]> {
  const response = await fetch(`${ingressBase}${route}`, { method: "POST", body, headers });
  const text = await response.text();
  if (response.status !== 202) throw new Error(`POST ${route} answered ${response.status}: ${text}`);
  return (JSON.parse(text) as { ids: string[] }).ids;
}
