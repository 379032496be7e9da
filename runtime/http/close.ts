// A listener's graceful close: stop accepting, let in-flight requests finish until the deadline,
// answer what is still arriving with 503 shutting_down, then cut the remaining connections.
import type { Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { apiError } from "../errors.js";
import { sendError } from "./respond.js";

/** How long the 503s written at the close deadline get to reach their clients. */
const REPLY_GRACE_MS = 250;

/**
 * Replies not yet begun close their connection after them: none advertises keep-alive to a client
 * whose next request would find the socket gone. `inFlight`: each connection's latest response not
 * yet closed (runtime/http/server.ts).
 */
export function closeAfterReplies(inFlight: ReadonlyMap<Socket, ServerResponse>): void {
  for (const res of inFlight.values()) if (!res.headersSent) res.setHeader("Connection", "close");
}

/** Closes the server; at `deadlineMs`, answers what is still arriving and cuts every connection. */
export async function closeGracefully(server: Server, inFlight: ReadonlyMap<Socket, ServerResponse>, deadlineMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // A busy keep-alive socket becomes idle after its reply; close it then, not at the deadline.
  // Requests arriving meanwhile are answered with Connection: close (see the request listener).
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  const deadline = new Promise<"deadline">((resolve) => setTimeout(() => resolve("deadline"), Math.max(0, deadlineMs)).unref());
  const first = await Promise.race([closed.then(() => "closed" as const), deadline]);
  clearInterval(sweep);
  if (first === "deadline") {
    await answerUnfinished(inFlight);
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
async function answerUnfinished(inFlight: ReadonlyMap<Socket, ServerResponse>): Promise<void> {
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
