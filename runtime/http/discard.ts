// Reading and dropping the rest of a request body that will not be used, within a byte and a time
// bound. Closing a connection while the client is still sending makes the kernel answer with a TCP
// reset, which can destroy an error reply the client has not read yet (EPIPE/ECONNRESET instead of
// the 413); RFC 9112 §9.6 asks for this staged close instead.
import { timerDelayMs } from "../time/clock.js";
import type { IncomingMessage } from "node:http";
import { bodyBroken } from "./body.js";

export interface DiscardLimits {
  /** Bytes read and dropped at most; past them reading stops (the stream is paused, nothing is kept). */
  maxBytes: number;
  /** How long to wait for the body to end. */
  maxMs: number;
}

/** After an early error reply: up to 1 MiB or 1 s of the unread body, whichever ends first. */
export const LINGER_LIMITS: DiscardLimits = { maxBytes: 1024 * 1024, maxMs: 1_000 };

export interface DiscardOutcome {
  /** The body ended within the limits: the connection is at a request boundary again. */
  ended: boolean;
  discardedBytes: number;
}

/**
 * Reads and drops what is left of `req`'s body. Resolves once the body ended, `maxMs` passed or the
 * connection went away. Past `maxBytes` it stops reading and waits out the time, so a client that
 * ignores the reply and keeps sending is throttled by TCP rather than read into memory.
 */
export function discardRequestBody(req: IncomingMessage, limits: DiscardLimits): Promise<DiscardOutcome> {
  if (req.complete) return Promise.resolve({ ended: true, discardedBytes: 0 });
  // A body the parser gave up on (body.ts failBody) will not end: nothing to wait for.
  if (bodyBroken(req)) return Promise.resolve({ ended: false, discardedBytes: 0 });
  return new Promise((resolve) => {
    let discardedBytes = 0;
    const finish = (ended: boolean) => {
      clearTimeout(timer);
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onGone);
      req.off("close", onGone);
      resolve({ ended, discardedBytes });
    };
    const onData = (chunk: Buffer) => {
      discardedBytes += chunk.length;
      if (discardedBytes > limits.maxBytes) {
        req.off("data", onData);
        req.pause();
      }
    };
    const onEnd = () => finish(true);
    const onGone = () => finish(req.complete);
    const timer = setTimeout(() => finish(false), timerDelayMs(limits.maxMs));
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onGone);
    req.on("close", onGone);
    req.resume();
  });
}
