// The admin listener's front door: bare `GET /healthz` answers without a token; everything else
// needs the admin bearer token when one is configured (401 unauthorized, clarifications.md 34),
// then goes to health details or the Admin API's routes; what nobody handles is 404 not_found.
import type { IncomingMessage, ServerResponse } from "node:http";
import { apiError } from "./errors.js";
import type { HealthEndpoint } from "./health/http.js";
import { BEARER_CHALLENGE, verifyBearerToken } from "./ingress/verify/index.js";

/** The Admin API's routes; resolves false when it does not handle the path (then 404 not_found). */
export type AdminRouteHandler = (req: IncomingMessage, res: ServerResponse, pathWithoutPrefix: string) => Promise<boolean>;

export interface AdminFrontDeps {
  /** The current admin tokens; empty means the admin API is open (loopback only, the compiler checks). */
  tokens(): readonly string[];
  health: HealthEndpoint;
  routes?: AdminRouteHandler;
}

export function createAdminFront(deps: AdminFrontDeps) {
  return async function handleAdmin(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (!deps.health.isBareProbe(req, path)) {
      const tokens = deps.tokens();
      if (tokens.length > 0 && !verifyBearerToken(req.headers, tokens).ok) {
        throw apiError("unauthorized", "missing or invalid admin token", { headers: { "WWW-Authenticate": BEARER_CHALLENGE }, closeConnection: hasBody(req) });
      }
    }
    if (await deps.health.handle(req, res, path)) return;
    if (deps.routes && (await deps.routes(req, res, path))) return;
    throw apiError("not_found", `no admin endpoint at ${path}`, { closeConnection: hasBody(req) });
  };
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return !req.complete && (req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0"));
}
