// The HTTP listeners of a config. Ingress, the Pull API and the Admin API may share one identical
// listen address when their prefixes do not overlap (docs/spoolfile.md
// "Routes"); each request then goes to the mount with the longest matching prefix, ingress
// (no prefix) taking what is left. Metrics always has a listener of its own.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ListenAddress, SpoolConfig, TlsConfig } from "../../compiler/ir.js";
import { apiError, shortPath } from "../errors.js";
import { createHttpServer, type HttpListener, type HttpServerOptions } from "./server.js";
import { loadListenerTls, type ListenerTls } from "./tls.js";
import type { AccessLogger } from "../observability/access-log.js";

export type MountName = "ingress" | "pull" | "admin";

/** A handler that receives the request path without the query string and without its prefix. */
export type MountHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;

export interface MountPlan {
  readonly name: MountName;
  readonly prefix: string;
}

export interface ListenerPlan {
  readonly listen: ListenAddress;
  /** The mounts' tls block; the compiler makes mounts sharing an address agree on it. */
  readonly tls: TlsConfig | null;
  /** Longest prefix first, so dispatch takes the first that matches. */
  readonly mounts: readonly MountPlan[];
}

/** Groups the three API listeners by identical address; throws when shared prefixes overlap. */
export function planListeners(config: SpoolConfig): ListenerPlan[] {
  const wanted: { name: MountName; listen: ListenAddress; prefix: string; tls: TlsConfig | null }[] = [
    { name: "ingress", listen: config.ingress.listen, prefix: "", tls: config.ingress.tls },
    { name: "pull", listen: config.pullApi.listen, prefix: config.pullApi.prefix, tls: config.pullApi.tls },
    { name: "admin", listen: config.adminApi.listen, prefix: config.adminApi.prefix, tls: config.adminApi.tls },
  ];
  const byAddress = new Map<string, { listen: ListenAddress; tls: TlsConfig | null; mounts: MountPlan[] }>();
  for (const { name, listen, prefix, tls } of wanted) {
    const group = byAddress.get(listen.address) ?? { listen, tls, mounts: [] };
    for (const other of group.mounts) {
      if (prefixesOverlap(other.prefix, prefix)) {
        throw new Error(`${name} and ${other.name} share ${listen.address} with overlapping prefixes ${JSON.stringify(prefix)} and ${JSON.stringify(other.prefix)}`);
      }
    }
    group.mounts.push({ name, prefix });
    byAddress.set(listen.address, group);
  }
  return [...byAddress.values()].map(({ listen, tls, mounts }) => ({
    listen,
    tls,
    mounts: [...mounts].sort((a, b) => b.prefix.length - a.prefix.length),
  }));
}

// Node's parser limit on the whole header block (set per server, read per new connection, updated
// on reload); the routes' max_headers (Σ name+value bytes) is checked per request below it, with
// room for line framing.
export function parserHeaderLimit(config: SpoolConfig): number {
  const largest = Math.max(config.defaults.maxHeadersBytes, ...config.routes.map((r) => r.maxHeadersBytes));
  return Math.max(16 * 1024, largest * 2 + 8 * 1024);
}

function prefixesOverlap(a: string, b: string): boolean {
  // A prefix-less mount takes what the prefixed ones leave, so only two prefix-less mounts clash.
  if (a === "" || b === "") return a === b;
  return withinPrefix(a, b) || withinPrefix(b, a);
}

/** `/api` covers `/api` and `/api/x`, not `/apix`. */
function withinPrefix(path: string, prefix: string): boolean {
  if (prefix === "") return true;
  return path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === 0x2f);
}

/** The listener's name in logs and errors: its mounts, `ingress+pull` for a shared one. */
export function listenerName(plan: ListenerPlan): string {
  return plan.mounts.map((mount) => mount.name).join("+");
}

/** The listener's certificate and client policy, its files read now (at start, and again on each reload). */
export function loadPlanTls(tls: TlsConfig, plan: ListenerPlan): ListenerTls {
  return loadListenerTls(tls, listenerName(plan));
}

export interface RunningListener {
  readonly plan: ListenerPlan;
  readonly listener: HttpListener;
}

export interface StartListenersOptions {
  http: HttpServerOptions;
  /** Parser-level refusals on a listener that serves ingress (counted as ingress refusals). */
  onIngressClientError?: HttpServerOptions["onClientError"];
  handlers: Readonly<Record<MountName, MountHandler>>;
  accessLog?: AccessLogger;
}

/** Binds every planned listener; if one fails to bind, the ones already bound are closed again. */
export async function startListeners(plans: readonly ListenerPlan[], options: StartListenersOptions): Promise<RunningListener[]> {
  const running: RunningListener[] = [];
  try {
    for (const plan of plans) {
      const servesIngress = plan.mounts.some((mount) => mount.name === "ingress");
      const accessLog = options.accessLog;
      const http: HttpServerOptions = {
        ...options.http,
        ...(servesIngress && options.onIngressClientError ? { onClientError: options.onIngressClientError } : {}),
        // Requests the server answers itself are logged under the mount their path falls in.
        ...(accessLog ? { onServerAnswer: (req: IncomingMessage, res: ServerResponse) => accessLog.track(req, res, mountFor(plan, requestPath(req.url ?? "/")).name) } : {}),
      };
      if (plan.tls) http.tls = loadPlanTls(plan.tls, plan);
      const server = createHttpServer(dispatcher(plan, options), http);
      const listener = await server.listen({ host: plan.listen.host === "" ? undefined : plan.listen.host, port: plan.listen.port });
      running.push({ plan, listener });
    }
  } catch (error) {
    await Promise.all(running.map((r) => r.listener.close(0)));
    throw error;
  }
  return running;
}

// Not async: the mount's promise is handed straight to the server (runtime/http/server.ts), which
// answers its rejection or a synchronous throw alike; an extra async frame per request buys nothing.
function dispatcher(plan: ListenerPlan, options: StartListenersOptions) {
  return (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = requestPath(req.url ?? "/");
    const mount = mountFor(plan, path);
    if (!withinPrefix(path, mount.prefix)) {
      options.accessLog?.track(req, res, mount.name);
      throw apiError("not_found", `nothing is served at ${shortPath(path)} on this listener: the ${mount.name} API is under ${mount.prefix}`, { closeConnection: true });
    }
    options.accessLog?.track(req, res, mount.name);
    return options.handlers[mount.name](req, res, path.slice(mount.prefix.length) || "/");
  };
}

/**
 * The mount a path falls in. The prefix-less mount (ingress, or an API configured without a prefix)
 * takes what the prefixed ones leave. A path outside every prefix of an address without one is not
 * served (the Pull and Admin APIs live only under their prefix, docs/spoolfile.md): it gets the
 * last mount, whose prefix it is not within.
 */
function mountFor(plan: ListenerPlan, path: string): MountPlan {
  // A plain loop: this runs for every request (no callback allocated on the ingress path).
  const { mounts } = plan;
  for (const candidate of mounts) if (withinPrefix(path, candidate.prefix)) return candidate;
  return mounts[mounts.length - 1];
}

/** The path of a request target without its query; absolute-form targets are reduced to their path. */
export function requestPath(target: string): string {
  let path = target;
  if (!path.startsWith("/")) {
    try {
      path = new URL(path).pathname;
    } catch {
      return path;
    }
  }
  const question = path.indexOf("?");
  return question < 0 ? path : path.slice(0, question);
}
