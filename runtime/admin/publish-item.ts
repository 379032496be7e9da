// Validation of one publish item against its route (docs/api.md "Admin API",
// publish). Pure: the caller supplies the route and gets a NewMessage or an ApiError
// carrying the item's 0-based index.
import { isHttpHeaderValue, isHttpToken, routeTargets, type Route } from "../../compiler/index.js";
import { apiError } from "../errors.js";
import { isCredentialHeader } from "../http/credential-headers.js";
import type { NewMessage } from "../store/records.js";
import { parseRfc3339Ms } from "./params.js";

export const MAX_MESSAGE_ID_CHARS = 256;

export interface PublishItemInput {
  id: string;
  target?: string;
  payload_b64: string;
  headers?: Record<string, string>;
  received_at?: string;
  next_run_at?: string;
}

const LONE_SURROGATE = /\p{Cs}/u;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/** Standard base64, padded or not; anything else (whitespace, base64url, stray `=`) is undefined. */
export function decodeBase64Strict(text: string): Buffer | undefined {
  if (!BASE64.test(text)) return undefined;
  return Buffer.from(text, "base64");
}

export function headerProblem(name: string, value: string): string | undefined {
  if (!isHttpToken(name)) return `header name ${JSON.stringify(name)} is not a valid HTTP token`;
  if (!isHttpHeaderValue(value)) return `header ${JSON.stringify(name)} has a value with control characters (CR, LF, NUL) or characters outside Latin-1`;
  return undefined;
}

/** Σ(name + value) bytes, as ingress measures max_headers (docs/decisions.md D10). */
export function headersBytes(headers: Readonly<Record<string, string>>): number {
  let total = 0;
  for (const [name, value] of Object.entries(headers)) total += Buffer.byteLength(name, "latin1") + Buffer.byteLength(value, "latin1");
  return total;
}

/**
 * Rule 2: a given target must be one of the route's (else `unknownCode`: target_unresolvable on
 * global publish, managed_target_mismatch on an endpoint's); without one, a single-target route
 * resolves itself and a multi-target route is 400 target_unresolvable.
 */
export function resolveTarget(
  route: Route,
  target: string | undefined,
  itemIndex: number,
  unknownCode: "target_unresolvable" | "managed_target_mismatch" = "target_unresolvable",
): string {
  const targets = routeTargets(route);
  if (target !== undefined) {
    if (!targets.includes(target)) {
      throw apiError(unknownCode, `route ${route.path} has no target ${JSON.stringify(target)}; its targets are ${targets.join(", ")}`, { itemIndex });
    }
    return target;
  }
  if (targets.length !== 1) {
    throw apiError("target_unresolvable", `route ${route.path} has ${targets.length} targets: name one in target`, { itemIndex });
  }
  return targets[0];
}

export function buildMessage(item: PublishItemInput, route: Route, target: string, itemIndex: number, nowMs: number): NewMessage {
  const at = { itemIndex };
  if (item.id.trim() === "") throw apiError("invalid_body", "id must not be empty", at);
  if ([...item.id].length > MAX_MESSAGE_ID_CHARS) throw apiError("invalid_body", `id is longer than ${MAX_MESSAGE_ID_CHARS} characters`, at);
  // A lone surrogate has no UTF-8 form: stored, it would become U+FFFD, and the listed id would
  // then name no message (or another one's).
  if (LONE_SURROGATE.test(item.id)) throw apiError("invalid_body", "id must be valid Unicode text (it holds a lone surrogate)", at);

  const payload = decodeBase64Strict(item.payload_b64);
  if (payload === undefined) throw apiError("invalid_payload_b64", "payload_b64 is not valid standard base64", at);
  if (payload.length > route.maxBodyBytes) {
    throw apiError("payload_too_large", `payload of ${payload.length} bytes exceeds max_body ${route.maxBodyBytes} of route ${route.path}`, at);
  }

  const given = item.headers ?? {};
  for (const [name, value] of Object.entries(given)) {
    const problem = headerProblem(name, value);
    if (problem) throw apiError("invalid_header", problem, at);
  }
  const size = headersBytes(given);
  if (size > route.maxHeadersBytes) {
    throw apiError("headers_too_large", `headers of ${size} bytes exceed max_headers ${route.maxHeadersBytes} of route ${route.path}`, at);
  }
  // docs/decisions.md D11: stored headers never hold credentials, whoever supplies them; a push
  // target would otherwise receive the publisher's Authorization or Cookie.
  const headers = Object.fromEntries(Object.entries(given).filter(([name]) => !isCredentialHeader(name)));

  const receivedAtMs = optionalInstant(item.received_at, "invalid_received_at", "received_at", itemIndex) ?? nowMs;
  const nextRunAtMs = optionalInstant(item.next_run_at, "invalid_next_run_at", "next_run_at", itemIndex) ?? nowMs;
  return { id: item.id, route: route.path, target, payload, headers, trace: null, receivedAtMs, nextRunAtMs };
}

function optionalInstant(
  text: string | undefined,
  code: "invalid_received_at" | "invalid_next_run_at",
  field: string,
  itemIndex: number,
): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseRfc3339Ms(text);
  if (ms === undefined) throw apiError(code, `${field} must be an RFC 3339 timestamp, got ${JSON.stringify(text)}`, { itemIndex });
  return ms;
}
