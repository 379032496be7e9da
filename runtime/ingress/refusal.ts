// An ingress refusal: a catalogue error with the reason label it is counted under
// (spool_ingress_rejected_by_reason_total), and how it is answered.
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, apiError, retryAfterHeader } from "../errors.js";
import { awaitsContinue } from "../http/body.js";
import { discardRequestBody } from "../http/discard.js";
import { sendError } from "../http/respond.js";

/** A refusal with the reason label it is counted under. */
export class IngressRefusal extends Error {
  constructor(
    readonly reason: string,
    readonly error: ApiError,
  ) {
    super(error.message);
  }
}

export const refuse = (reason: string, error: ApiError) => new IngressRefusal(reason, error);

/** What a failure that is no refusal (a store or verifier crash) is answered with. */
export function unexpectedFailure(): IngressRefusal {
  return refuse("other", apiError("store_unavailable", "the message could not be stored", { surface: "ingress", headers: retryAfterHeader(5) }));
}

/**
 * Answers a counted refusal. A small unread body is read and dropped so the connection stays
 * usable; a large or unknown one gets the reply at once and a staged close (runtime/http/respond.ts).
 */
export async function answerRefusal(req: IncomingMessage, res: ServerResponse, refusal: IngressRefusal): Promise<void> {
  // Answered already: shutdown's deadline came while the body was still arriving (http/server.ts).
  if (res.headersSent) return;
  let error = refusal.error;
  if (error.closeConnection && !req.complete && (await discardSmallBody(req))) error = withoutClose(error);
  sendError(res, error);
}

const DISCARDABLE_BODY_BYTES = 64 * 1024;

/** A small declared body is drained before the reply, so the keep-alive connection stays usable. */
async function discardSmallBody(req: IncomingMessage): Promise<boolean> {
  // A client waiting for 100 Continue sends no body: there is nothing to drain, only to close.
  if (awaitsContinue(req)) return false;
  const length = req.headers["content-length"];
  if (length === undefined || !/^\d+$/.test(length) || Number(length) > DISCARDABLE_BODY_BYTES) return false;
  return (await discardRequestBody(req, { maxBytes: DISCARDABLE_BODY_BYTES, maxMs: 2_000 })).ended;
}

function withoutClose(error: ApiError): ApiError {
  return apiError(error.code, error.detail, { surface: "ingress", headers: error.headers, fields: error.fields });
}

// A refusal before the body was read leaves it on the wire; the connection must not be reused.
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}
