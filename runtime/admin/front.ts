// The admin listener's front door: bare `GET /healthz` answers without a token; everything else
// needs the admin bearer token when one is configured (401 unauthorized, docs/decisions.md D28),
// then goes to health details or the Admin API's routes; what nobody handles is 404 not_found.
import type { IncomingMessage, ServerResponse } from "node:http";
import { isLoopbackHost } from "../../compiler/index.js";
import { apiError, shortPath } from "../errors.js";
import { createHealthEndpoint, type HealthDeps } from "./health/http.js";
import { BEARER_CHALLENGE, verifyBearerToken } from "../auth/token.js";

/** The Admin API's routes; resolves false when it does not handle the path (then 404 not_found). */
export type AdminRouteHandler = (req: IncomingMessage, res: ServerResponse, pathWithoutPrefix: string) => Promise<boolean>;

export interface AdminFrontDeps {
  /** The current admin tokens; empty means the admin API is open (loopback only, the compiler checks). */
  tokens(): readonly string[];
  /** What /healthz reads (health/http.ts). */
  health: HealthDeps;
  routes?: AdminRouteHandler;
}

/** The admin listener's handler: the whole Admin API, /healthz included. */
export function createAdminFront(deps: AdminFrontDeps) {
  const health = createHealthEndpoint(deps.health);
  return async function handleAdmin(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (!health.isBareProbe(req, path)) {
      const tokens = deps.tokens();
      if (tokens.length > 0 && !verifyBearerToken(req.headers, tokens).ok) {
        throw apiError("unauthorized", "missing or invalid admin token", { headers: { "WWW-Authenticate": BEARER_CHALLENGE }, closeConnection: hasBody(req) });
      }
      if (tokens.length === 0) refuseForeignOrigin(req);
    }
    if (await health.handle(req, res, path)) return;
    if (deps.routes && (await deps.routes(req, res, path))) return;
    throw apiError("not_found", `no admin endpoint at ${shortPath(path)}`, { closeConnection: hasBody(req) });
  };
}

/**
 * An Admin API without a token is safe only because it listens on loopback, and a browser can cross
 * that line: a web page whose name resolves to 127.0.0.1 (DNS rebinding) is same-origin with it. Such
 * requests carry the page's name in Host and Origin, so an open Admin API answers only requests
 * addressed to a loopback name (`localhost`, 127.0.0.0/8, ::1) and sent from no other origin, as
 * Caddy's admin endpoint does; anything else is 403 forbidden. A token makes this unnecessary.
 */
function refuseForeignOrigin(req: IncomingMessage): void {
  const host = req.headers.host;
  if (host !== undefined && !namesLoopback(`http://${host}`)) throw notAddressedToLocalhost(req, host);
  // An absolute-form target (`GET http://name/messages`) names the host in place of Host (RFC 9112 §3.2.2).
  const target = req.url ?? "";
  if (/^https?:\/\//i.test(target) && !namesLoopback(target)) throw notAddressedToLocalhost(req, target);
  const origin = req.headers.origin;
  if (origin !== undefined && !namesLoopback(origin)) {
    throw apiError("forbidden", `the Admin API has no token and answers no request from another origin (${JSON.stringify(origin.slice(0, 100))})`, { closeConnection: hasBody(req) });
  }
}

function notAddressedToLocalhost(req: IncomingMessage, addressed: string) {
  return apiError("forbidden", `the Admin API has no token and answers only requests addressed to localhost, not ${JSON.stringify(addressed.slice(0, 100))}`, { closeConnection: hasBody(req) });
}

/** Whether the URL's host is a loopback name or address; false for anything that is not a URL (an Origin of "null"). */
function namesLoopback(url: string): boolean {
  try {
    return isLoopbackHost(new URL(url).hostname.replace(/^\[|\]$/g, ""));
  } catch {
    return false;
  }
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return !req.complete && (req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0"));
}
