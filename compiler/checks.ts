import { formatSpan, type Directive, type Span } from "../grammar/index.js";
import type { CompiledRoute } from "./blocks/route.js";
import { routeSubject, spanOf, type CompileContext } from "./context.js";
import type { AdminApiConfig, Backend, IngressConfig, ListenAddress, ObservabilityConfig, PullApiConfig, TlsConfig } from "./ir.js";
import { pathCovers } from "./syntax.js";
import { isLoopbackHost } from "./values.js";

interface CheckInput {
  readonly ingress: IngressConfig;
  readonly pullApi: PullApiConfig;
  readonly adminApi: AdminApiConfig;
  readonly observability: ObservabilityConfig;
  readonly compiledRoutes: readonly CompiledRoute[];
  readonly blocks: ReadonlyMap<string, Directive>;
}

/** Rules that span several blocks. Returns the instance backend. */
export function checkConfig(cx: CompileContext, input: CheckInput): Backend {
  checkRoutes(cx, input.compiledRoutes);
  checkPull(cx, input);
  checkListeners(cx, input);
  checkGrpc(cx, input);
  checkAdmin(cx, input);
  return checkBackend(cx, input.compiledRoutes);
}

function checkRoutes(cx: CompileContext, routes: readonly CompiledRoute[]): void {
  const byPath = new Map<string, CompiledRoute>();
  const byEndpoint = new Map<string, CompiledRoute>();
  // Earlier inbound routes without match criteria, by path: each one takes all traffic under it.
  const catchAll = new Map<string, CompiledRoute>();
  for (const current of routes) {
    const { route, pathArg } = current;
    const first = byPath.get(route.path);
    if (first) {
      cx.error(pathArg.span, "route_conflict", `each route path once (first at ${formatSpan(first.pathArg.span)})`, `duplicate route ${route.path} (first at ${formatSpan(first.pathArg.span)})`, { subject: routeSubject(pathArg.value) });
      continue;
    }
    byPath.set(route.path, current);
    // Only inbound routes take traffic, so only they can shadow each other.
    if (route.channel === "inbound") {
      const shadow = ancestorPaths(route.path).map((p) => catchAll.get(p)).find((r) => r !== undefined);
      if (shadow) {
        cx.error(pathArg.span, "route_conflict", `no catch-all route above it: ${routeSubject(shadow.pathArg.value)} (at ${formatSpan(shadow.pathArg.span)}) comes first with no match criteria`, `route ${route.path} is shadowed by ${shadow.route.path} (at ${formatSpan(shadow.pathArg.span)}), which comes first and has no match criteria; move ${route.path} above it or give ${shadow.route.path} a match`, { subject: routeSubject(pathArg.value) });
      }
      // A route whose match failed is not known to take all traffic: its error is reported already.
      if (route.match === null && !cx.failedWithin(current.directive, "match")) catchAll.set(route.path, current);
    }
    if (route.application !== null && route.endpointName !== null) {
      const key = `${route.application}\u0000${route.endpointName}`;
      const other = byEndpoint.get(key);
      if (other) {
        cx.error(spanOf(current.labelSpan!), "route_conflict", `an application endpoint mapped to one route only (also ${routeSubject(other.pathArg.value)} at ${formatSpan(other.pathArg.span)})`, `application ${JSON.stringify(route.application)} endpoint ${JSON.stringify(route.endpointName)} is already mapped to route ${other.route.path} (at ${formatSpan(other.pathArg.span)}); an endpoint maps to exactly one route`, { subject: `${routeSubject(pathArg.value)} › application` });
      } else byEndpoint.set(key, current);
    }
  }
}

/** `/a/b/c` → ["/", "/a", "/a/b"]: the paths whose routes would cover it. */
function ancestorPaths(path: string): string[] {
  const out = ["/"];
  const segments = path.split("/").filter(Boolean);
  for (let i = 1; i < segments.length; i++) out.push("/" + segments.slice(0, i).join("/"));
  return path === "/" ? [] : out;
}

function checkPull(cx: CompileContext, input: CheckInput): void {
  const { pullApi } = input;
  const byPullPath = new Map<string, CompiledRoute>();
  for (const current of input.compiledRoutes) {
    const mode = current.route.mode;
    if (mode.kind !== "pull" || !mode.path) continue;
    const at = spanOf(current.pullDirective!);
    const other = byPullPath.get(mode.path);
    if (other) cx.error(at, "route_conflict", `a pull path of its own (${routeSubject(other.pathArg.value)} uses it)`, `pull path ${mode.path} is already used by route ${other.route.path}`, { subject: `${routeSubject(current.pathArg.value)} › pull › path` });
    else byPullPath.set(mode.path, current);
    if (pullApi.prefix && pathCovers(pullApi.prefix, mode.path)) {
      cx.error(at, "conflict", "a pull path relative to the pull_api prefix (without the prefix)", `pull path ${mode.path} must be relative to pull_api prefix ${pullApi.prefix}: write the path without the prefix`, { subject: `${routeSubject(current.pathArg.value)} › pull › path` });
    }
    // A token statement that failed has its own error: "no token" would report it twice.
    const tokenFailed = cx.failedWithin(current.pullDirective, "auth") || cx.failedWithin(input.blocks.get("pull_api"), "auth") || cx.isBroken("block", "pull_api");
    if (mode.tokens === null && pullApi.tokens.length === 0 && !tokenFailed) {
      cx.error(at, "missing_token", "pull_api { auth token <source> } or pull { auth token <source> }", `route ${current.route.path} is pulled but no token is configured: add pull_api { auth token <source> } or pull { auth token <source> }`, { subject: `${routeSubject(current.pathArg.value)} › pull` });
    }
  }
}

function checkListeners(cx: CompileContext, input: CheckInput): void {
  const { ingress, pullApi, adminApi, observability } = input;
  // A listener left at its default has no block to point at; the file's start stands in.
  const at = (block: string) => blockSpan(cx, input, block);
  const listeners: { name: string; block: string; listen: ListenAddress; prefix: string | null; tls: TlsConfig | null }[] = [
    { name: "ingress", block: "ingress", listen: ingress.listen, prefix: null, tls: ingress.tls },
    { name: "pull_api", block: "pull_api", listen: pullApi.listen, prefix: pullApi.prefix, tls: pullApi.tls },
    { name: "admin_api", block: "admin_api", listen: adminApi.listen, prefix: adminApi.prefix, tls: adminApi.tls },
  ];
  if (observability.metrics.enabled) listeners.push({ name: "metrics", block: "observability", listen: observability.metrics.listen, prefix: null, tls: null });
  // A listener whose block is misspelt or whose listen, prefix or tls failed is at its defaults only
  // because of an error already reported: comparing those defaults would report it again.
  const failed = (l: { name: string; block: string }) =>
    cx.isBroken("block", l.block) || cx.failedWithin(input.blocks.get(l.block), ...(l.name === "metrics" ? ["metrics"] : ["listen", "prefix", "tls"]));
  for (let i = 0; i < listeners.length; i++) {
    for (let j = i + 1; j < listeners.length; j++) {
      const a = listeners[i];
      const b = listeners[j];
      if (failed(a) || failed(b)) continue;
      if (a.listen.port === 0 || a.listen.port !== b.listen.port) continue;
      if (a.listen.address !== b.listen.address) {
        cx.error(at(b.block), "listener_conflict", `a port of its own, or the identical address as ${a.name} to share its listener`, `${b.name} listen ${b.listen.address} and ${a.name} listen ${a.listen.address} use the same port; to share a listener write the identical address`, { subject: `${b.name} › listen` });
        continue;
      }
      if (a.name === "metrics" || b.name === "metrics") {
        cx.error(at(b.block), "listener_conflict", `a listener of its own for metrics (not shared with ${a.name})`, `metrics must have its own listener; ${a.name} already uses ${a.listen.address}`, { subject: "observability › metrics › listen" });
        continue;
      }
      // One socket speaks one protocol: TLS or not, with one certificate and one client policy.
      if (JSON.stringify(a.tls) !== JSON.stringify(b.tls)) {
        cx.error(at(b.block), "listener_conflict", `the same tls block in ${b.name} and ${a.name} (or none), which share a listener`, `${b.name} shares ${a.listen.address} with ${a.name}: a shared listener needs the same tls block in both (or none)`, { subject: `${b.name} › tls` });
      }
      // Shared listener: the APIs are told apart by prefix (docs/spoolfile.md "Routes").
      const prefixes = [a, b].filter((l) => l.prefix !== null) as { name: string; block: string; prefix: string }[];
      for (const l of prefixes) {
        if (!l.prefix) cx.error(at(l.block), "listener_conflict", `a prefix for ${l.name} on the listener it shares`, `${l.name} shares ${a.listen.address} with ${l === a ? b.name : a.name}: give ${l.name} a prefix`, { subject: `${l.name} › prefix` });
      }
      if (prefixes.length === 2 && prefixes[0].prefix && prefixes[1].prefix && (pathCovers(prefixes[0].prefix, prefixes[1].prefix) || pathCovers(prefixes[1].prefix, prefixes[0].prefix))) {
        cx.error(at(b.block), "listener_conflict", `prefixes of ${prefixes[0].name} and ${prefixes[1].name} that do not overlap on their shared listener`, `${prefixes[0].name} prefix ${prefixes[0].prefix} and ${prefixes[1].name} prefix ${prefixes[1].prefix} overlap on the shared listener ${a.listen.address}`, { subject: `${b.name} › prefix` });
      }
      if (a.name === "ingress") {
        for (const l of prefixes) {
          if (!l.prefix) continue;
          for (const r of input.compiledRoutes) {
            if (r.route.channel === "inbound" && (pathCovers(l.prefix, r.route.path) || pathCovers(r.route.path, l.prefix))) {
              cx.error(r.pathArg.span, "route_conflict", `an inbound route outside the ${l.name} prefix on the shared listener`, `route ${r.route.path} collides with ${l.name} prefix ${l.prefix} on the shared listener ${a.listen.address}`, { subject: routeSubject(r.pathArg.value) });
            }
          }
        }
      }
    }
  }
}

/**
 * `pull_api { grpc_listen }` (docs/grpc.md): the worker service serves pull routes, so one without
 * any is a mistake; and it needs a port of its own (one socket speaks one protocol), so an address
 * on the port of the ingress, Pull API, Admin API or metrics listener is refused.
 */
function checkGrpc(cx: CompileContext, input: CheckInput): void {
  const { ingress, pullApi, adminApi, observability } = input;
  const grpc = pullApi.grpcListen;
  if (grpc === null) return;
  const pullBlock = input.blocks.get("pull_api");
  const written = pullBlock?.block?.items.find((item): item is Directive => item.kind === "directive" && item.name?.value === "grpc_listen");
  const at = written ? spanOf(written) : blockSpan(cx, input, "pull_api");
  if (!input.compiledRoutes.some((r) => r.route.mode.kind === "pull")) {
    cx.error(at, "conflict", "a route with pull { path … } for the gRPC worker service to serve", `pull_api grpc_listen ${grpc.address} is set but no route is pulled: add a route with pull { path … } or remove grpc_listen`, { subject: "pull_api › grpc_listen" });
  }
  if (grpc.port === 0) return;
  const others: [name: string, block: string, listen: ListenAddress, failed: boolean][] = [
    ["ingress listen", "ingress", ingress.listen, cx.failedWithin(input.blocks.get("ingress"), "listen")],
    ["pull_api listen", "pull_api", pullApi.listen, cx.failedWithin(pullBlock, "listen")],
    ["admin_api listen", "admin_api", adminApi.listen, cx.failedWithin(input.blocks.get("admin_api"), "listen")],
  ];
  if (observability.metrics.enabled) others.push(["observability metrics listen", "observability", observability.metrics.listen, cx.failedWithin(input.blocks.get("observability"), "metrics")]);
  for (const [name, block, listen, failed] of others) {
    if (failed || cx.isBroken("block", block) || listen.port !== grpc.port) continue;
    cx.error(at, "listener_conflict", `a port of its own for grpc_listen (${name} uses ${listen.address})`, `pull_api grpc_listen ${grpc.address} uses the port of ${name} ${listen.address}: the gRPC worker service needs a listener of its own`, { subject: "pull_api › grpc_listen" });
  }
}

function checkAdmin(cx: CompileContext, input: CheckInput): void {
  const { adminApi } = input;
  // docs/decisions.md D28: a non-loopback admin listener without a token is a config error.
  if (adminApi.tokens.length === 0 && !isLoopbackHost(adminApi.listen.host) && !cx.failedWithin(input.blocks.get("admin_api"), "auth") && !cx.isBroken("block", "admin_api")) {
    cx.error(blockSpan(cx, input, "admin_api"), "missing_token", "auth token <source>, or listen on a loopback address like 127.0.0.1", `admin_api listens on ${adminApi.listen.address}, which is not loopback, without a token: add auth token <source> or listen on 127.0.0.1`, { subject: "admin_api" });
  }
}

// docs/decisions.md D6: one backend per instance; routes that name one must agree.
function checkBackend(cx: CompileContext, routes: readonly CompiledRoute[]): Backend {
  const written = routes.filter((r) => r.backendWritten);
  const first = written[0];
  for (const r of written.slice(1)) {
    if (r.route.backend !== first.route.backend) {
      cx.error(r.pathArg.span, "conflict", `one backend for every route (${routeSubject(first.pathArg.value)} uses ${first.route.backend})`, `route ${r.route.path} uses backend ${r.route.backend} but route ${first.route.path} uses ${first.route.backend}; one instance has one backend`, { subject: `${routeSubject(r.pathArg.value)} › queue` });
    }
  }
  return first?.route.backend ?? "sqlite";
}

function blockSpan(cx: CompileContext, input: CheckInput, block: string): Span {
  const d = input.blocks.get(block);
  return d ? spanOf(d) : { file: cx.file, line: 1, col: 1, offset: 0, endOffset: 0 };
}
