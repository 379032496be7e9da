// Request body and header-size limits, enforced while reading (issue 4: "a 10 GB body is refused
// at the limit, not buffered").
import type { IncomingMessage, ServerResponse } from "node:http";
import { apiError } from "../errors.js";

/**
 * Requests that sent `Expect: 100-continue`, with the response to write the interim 100 on. The
 * 100 goes out only when the body is actually read (readBody, after the Content-Length check), as
 * RFC 9110 §10.1.1 lets a server do: a request refused first (404, 405, a declared body over the
 * limit) gets its final answer without the client ever being told to send the body.
 */
const awaitingContinue = new WeakMap<IncomingMessage, ServerResponse>();

/** Called by the HTTP server for a request with `Expect: 100-continue` (its checkContinue event). */
export function deferContinue(req: IncomingMessage, res: ServerResponse): void {
  awaitingContinue.set(req, res);
}

/** The request asked for `100 Continue` and has not been sent it: its body is not coming yet. */
export function awaitsContinue(req: IncomingMessage): boolean {
  return awaitingContinue.has(req);
}

function sendDeferredContinue(req: IncomingMessage): void {
  const res = awaitingContinue.get(req);
  if (res === undefined) return;
  awaitingContinue.delete(req);
  if (!res.headersSent && !res.writableEnded) res.writeContinue();
}

/**
 * Requests whose body the HTTP parser gave up on (server.ts, clientError: chunking that does not
 * parse, the request timeout, a half-close midway), with the refusal to answer: such a body never
 * ends, so a read in progress fails with it, and so does one started later.
 */
const brokenBodies = new WeakMap<IncomingMessage, Error>();
const BODY_BROKEN = "spool:body-broken";

/** Fails `req`'s body read, now or when it starts, with `error` (an ApiError the handler answers). */
export function failBody(req: IncomingMessage, error: Error): void {
  if (brokenBodies.has(req)) return;
  brokenBodies.set(req, error);
  req.emit(BODY_BROKEN, error);
}

/** The body will not arrive (failBody was called): do not wait for the rest of it. */
export function bodyBroken(req: IncomingMessage): boolean {
  return brokenBodies.has(req);
}

/**
 * The client closed the connection before its body had arrived: there is nobody to answer, and
 * nothing went wrong in Spool (not logged as an internal error; an Admin mutation is audited as
 * `client_gone`).
 */
export class ClientGoneError extends Error {
  constructor() {
    super("the client closed the connection before sending the whole request");
    this.name = "ClientGoneError";
  }
}

export interface ReadBodyOptions {
  maxBytes: number;
  /** Aborts the read (client gone, shutdown); the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Reads the whole body into one Buffer, refusing it with 413 payload_too_large as soon as it is
 * known to exceed `maxBytes`: before reading when Content-Length says so, otherwise at the first
 * chunk that crosses the limit. On refusal the stream is paused and detached, so nothing past the
 * limit is kept; the error asks for the connection to be closed because the unread remainder must
 * not be parsed as a next request.
 */
export function readBody(req: IncomingMessage, options: ReadBodyOptions): Promise<Buffer> {
  const { maxBytes, signal } = options;
  const tooLarge = (seen: string) =>
    apiError("payload_too_large", `request body ${seen} exceeds the limit of ${maxBytes} bytes`, {
      closeConnection: true,
    });

  const declared = req.headers["content-length"];
  if (declared !== undefined) {
    const declaredBytes = Number(declared);
    if (!/^\d+$/.test(declared) || !Number.isSafeInteger(declaredBytes)) {
      return Promise.reject(apiError("bad_request", "invalid Content-Length", { closeConnection: true }));
    }
    if (declaredBytes > maxBytes) {
      req.pause();
      return Promise.reject(tooLarge(`of ${declaredBytes} bytes`));
    }
  }
  if (signal?.aborted) return Promise.reject(signal.reason);
  // Gone before this read began: its `aborted` has fired already and would not fire again.
  if (req.destroyed && !req.complete) return Promise.reject(new ClientGoneError());
  const broken = brokenBodies.get(req);
  if (broken !== undefined) return Promise.reject(broken);
  sendDeferredContinue(req);

  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let receivedBytes = 0;
    let settled = false;

    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
      req.off(BODY_BROKEN, onBroken);
      signal?.removeEventListener("abort", onAbort);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      receivedBytes += chunk.length;
      if (receivedBytes > maxBytes) {
        req.pause();
        chunks.length = 0;
        finish(() => reject(tooLarge(`of more than ${maxBytes} bytes`)));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish(() => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, receivedBytes)));
    const onError = (err: Error) => finish(() => reject(err));
    const onAborted = () => finish(() => reject(new ClientGoneError()));
    const onBroken = (error: Error) => finish(() => reject(error));
    const onAbort = () => finish(() => reject(signal?.reason));

    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("aborted", onAborted);
    req.on(BODY_BROKEN, onBroken);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Size of the request headers as Σ(name + value) bytes over every header line, as the reference
 * measures `max_headers` (docs/decisions.md D10). rawHeaders keeps repeated headers as
 * separate lines, so each repetition counts. Node decodes header bytes as Latin-1, one character
 * per byte, so a string's length is its size on the wire.
 */
export function headersSize(req: Pick<IncomingMessage, "rawHeaders">): number {
  let total = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i++) total += raw[i].length;
  return total;
}
