import type { Directive } from "../../grammar/index.js";
import { readBareBlock, scalar, singleArg } from "../block-reader.js";
import { spanOf, type CompileContext } from "../context.js";
import { DEFAULTS } from "../defaults.js";
import type { AdminApiConfig, IngressConfig, ListenAddress, PullApiConfig, RateLimit, SecretSource, TlsConfig } from "../ir.js";
import { tlsFileKind, tlsFileProblem } from "../tls-files.js";
import { decodeListen, decodeNumber, decodeOneOf, decodePath, decodeSecretSource, expectArgs, expectNoBlock } from "../values.js";
import { CLIENT_AUTH_MODES } from "../reference.js";

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export function defaultListen(address: string): ListenAddress {
  const i = address.lastIndexOf(":");
  return { host: address.slice(0, i), port: Number(address.slice(i + 1)), address };
}

// ingress { listen <addr>; tls { … }; rate_limit { rps <float>; burst <int> } }
export function compileIngress(cx: CompileContext, d: Directive | undefined): IngressConfig {
  const out: Mutable<IngressConfig> = { listen: defaultListen(DEFAULTS.ingressListen), tls: null, rateLimit: DEFAULTS.ingressRateLimit };
  if (!d) return out;
  readBareBlock(cx, d, "ingress", {
    listen: listenRule(cx, "ingress listen", (v) => (out.listen = v)),
    tls: { handle: (t) => (out.tls = compileTls(cx, t, "ingress tls") ?? null) },
    rate_limit: { handle: (r) => (out.rateLimit = compileRateLimit(cx, r, "ingress rate_limit") ?? null) },
  });
  return out;
}

// pull_api { listen; prefix; auth token <source>…; max_batch; max_lease_batch; grpc_listen; default_lease_ttl;
//            max_lease_ttl; default_max_wait; max_wait; sse_keepalive; sse_max_connection; rate_limit { rps <float>; burst <int> };
//            tls { … } }
export function compilePullApi(cx: CompileContext, d: Directive | undefined): PullApiConfig {
  const out: Mutable<PullApiConfig> = {
    listen: defaultListen(DEFAULTS.pullListen),
    prefix: "",
    tokens: [],
    maxBatch: DEFAULTS.pullMaxBatch,
    maxLeaseBatch: DEFAULTS.pullMaxLeaseBatch,
    defaultLeaseTtlMs: DEFAULTS.pullDefaultLeaseTtlMs,
    maxLeaseTtlMs: DEFAULTS.pullMaxLeaseTtlMs,
    defaultMaxWaitMs: DEFAULTS.pullDefaultMaxWaitMs,
    maxWaitMs: DEFAULTS.pullMaxWaitMs,
    sseKeepaliveMs: DEFAULTS.pullSseKeepaliveMs,
    sseMaxConnectionMs: DEFAULTS.pullSseMaxConnectionMs,
    rateLimit: DEFAULTS.pullRateLimit,
    tls: null,
    grpcListen: DEFAULTS.pullGrpcListen,
  };
  if (!d) return out;
  const tokens: SecretSource[] = [];
  readBareBlock(cx, d, "pull_api", {
    listen: listenRule(cx, "pull_api listen", (v) => (out.listen = v)),
    prefix: prefixRule(cx, "pull_api prefix", (v) => (out.prefix = v)),
    auth: { repeatable: true, handle: (a) => authTokenInto(cx, a, "pull_api", tokens) },
    max_batch: scalar.int(cx, "max_batch", 1, 1000, (v) => (out.maxBatch = v)),
    max_lease_batch: scalar.int(cx, "max_lease_batch", 1, 100, (v) => (out.maxLeaseBatch = v)),
    grpc_listen: listenRule(cx, "pull_api grpc_listen", (v) => (out.grpcListen = v), "grpc_listen"),
    default_lease_ttl: scalar.duration(cx, "default_lease_ttl", (v) => (out.defaultLeaseTtlMs = v!), { positive: true }),
    max_lease_ttl: scalar.duration(cx, "max_lease_ttl", (v) => (out.maxLeaseTtlMs = v), { positive: true, allowOff: true }),
    default_max_wait: scalar.duration(cx, "default_max_wait", (v) => (out.defaultMaxWaitMs = v ?? 0), { allowOff: true }),
    max_wait: scalar.duration(cx, "max_wait", (v) => (out.maxWaitMs = v), { allowOff: true }),
    sse_keepalive: scalar.duration(cx, "sse_keepalive", (v) => (out.sseKeepaliveMs = v!), { positive: true }),
    sse_max_connection: scalar.duration(cx, "sse_max_connection", (v) => (out.sseMaxConnectionMs = v), { positive: true, allowOff: true }),
    rate_limit: { handle: (r) => (out.rateLimit = compileRateLimit(cx, r, "pull_api rate_limit") ?? null) },
    tls: { handle: (t) => (out.tls = compileTls(cx, t, "pull_api tls") ?? null) },
  });
  out.tokens = tokens;
  // docs/decisions.md D7: a default above its cap, implicit defaults included, is an error.
  if (out.maxLeaseTtlMs !== null && out.defaultLeaseTtlMs > out.maxLeaseTtlMs) {
    cx.error(settingSpan(d, "default_lease_ttl", "max_lease_ttl"), "conflict", "default_lease_ttl not above max_lease_ttl", `pull_api: default_lease_ttl (${out.defaultLeaseTtlMs}ms) is above max_lease_ttl (${out.maxLeaseTtlMs}ms)`);
  }
  if (out.maxWaitMs !== null && out.defaultMaxWaitMs > out.maxWaitMs) {
    cx.error(settingSpan(d, "default_max_wait", "max_wait"), "conflict", "default_max_wait not above max_wait", `pull_api: default_max_wait (${out.defaultMaxWaitMs}ms) is above max_wait (${out.maxWaitMs}ms)`);
  }
  return out;
}

/** Where a conflict between two settings of a block is reported: the first of them written, else the block. */
function settingSpan(d: Directive, ...names: string[]) {
  for (const name of names) {
    const written = d.block?.items.find((item): item is Directive => item.kind === "directive" && item.name?.value === name);
    if (written) return spanOf(written);
  }
  return spanOf(d);
}

// admin_api { listen; prefix; auth token <source>…; tls { … } }
export function compileAdminApi(cx: CompileContext, d: Directive | undefined): AdminApiConfig {
  const out: Mutable<AdminApiConfig> = { listen: defaultListen(DEFAULTS.adminListen), prefix: "", tokens: [], tls: null };
  if (!d) return out;
  const tokens: SecretSource[] = [];
  readBareBlock(cx, d, "admin_api", {
    listen: listenRule(cx, "admin_api listen", (v) => (out.listen = v)),
    prefix: prefixRule(cx, "admin_api prefix", (v) => (out.prefix = v)),
    auth: { repeatable: true, handle: (a) => authTokenInto(cx, a, "admin_api", tokens) },
    tls: { handle: (t) => (out.tls = compileTls(cx, t, "admin_api tls") ?? null) },
  });
  out.tokens = tokens;
  return out;
}

/** `auth token <source>` (the only auth form of the API blocks). */
export function authTokenInto(cx: CompileContext, d: Directive, where: string, into: SecretSource[]): void {
  if (!expectArgs(cx, d, 2, 2, "auth token <source>") || !expectNoBlock(cx, d)) return;
  if (d.args[0].value !== "token") {
    cx.error(d.args[0].span, "expected_enum", '"token" (auth token <source>)', `${where} auth: expected "token", got ${JSON.stringify(d.args[0].value)}`, { found: d.args[0].value });
    return;
  }
  const source = decodeSecretSource(cx, d.args[1], `${where} auth token`);
  if (source) into.push(source);
}

function listenRule(cx: CompileContext, what: string, set: (v: ListenAddress) => void, directive = "listen") {
  return {
    handle: (d: Directive) => {
      const arg = singleArg(cx, d, `${directive} <addr>`);
      const v = arg && decodeListen(cx, arg, what);
      if (v) set(v);
    },
  };
}

function prefixRule(cx: CompileContext, what: string, set: (v: string) => void) {
  return {
    handle: (d: Directive) => {
      const arg = singleArg(cx, d, `prefix /path`);
      const v = arg && decodePath(cx, arg, what, { allowEmpty: true });
      if (v !== undefined) set(v === "/" ? "" : v);
    },
  };
}

// tls { cert_file; key_file; client_ca; client_auth none|request|require_any|verify_if_given|require_and_verify }
export function compileTls(cx: CompileContext, d: Directive, where: string): TlsConfig | undefined {
  const out = { certFile: "", keyFile: "", clientCaFile: null as string | null, clientAuth: "none" as TlsConfig["clientAuth"] };
  readBareBlock(cx, d, where, {
    cert_file: scalar.text(cx, "cert_file", (v) => (out.certFile = v)),
    key_file: scalar.text(cx, "key_file", (v) => (out.keyFile = v)),
    client_ca: scalar.text(cx, "client_ca", (v) => (out.clientCaFile = v)),
    client_auth: {
      handle: (c) => {
        const arg = singleArg(cx, c, "client_auth <mode>");
        const mode = arg && decodeOneOf(cx, arg, "client_auth", CLIENT_AUTH_MODES);
        if (mode) out.clientAuth = mode === "require" ? "require_and_verify" : mode;
      },
    },
  });
  if ((!out.certFile || !out.keyFile) && cx.failedWithin(d, "cert_file", "key_file")) return undefined;
  if (!out.certFile || !out.keyFile) return cx.error(spanOf(d), "missing_directive", "both cert_file and key_file", `${where}: cert_file and key_file are both required`);
  if ((out.clientAuth === "verify_if_given" || out.clientAuth === "require_and_verify") && out.clientCaFile === null) {
    return cx.error(spanOf(d), "missing_directive", `client_ca with client_auth ${out.clientAuth}`, `${where}: client_auth ${out.clientAuth} verifies client certificates and needs client_ca, the CA bundle to verify them against`);
  }
  // Paths are relative to the Spoolfile, as `file:` secret sources are. The key is a secret: a file
  // that cannot be read, or is no PEM certificate or key (tls-files.ts), stops `spool run` and is a
  // warning for `config validate`.
  for (const [name, path] of [["cert_file", out.certFile], ["key_file", out.keyFile], ["client_ca", out.clientCaFile]] as const) {
    if (path === null) continue;
    const read = cx.readFile(path);
    const reason = "reason" in read ? read.reason : tlsFileProblem(tlsFileKind(name), read.text);
    if (reason) cx.secretProblem(spanOf(d), "file_unreadable", `a readable ${name} ${path} (${reason})`, `${where}: ${name} ${path} cannot be read: ${reason}`);
  }
  return {
    certFile: cx.resolvePath(out.certFile),
    keyFile: cx.resolvePath(out.keyFile),
    clientCaFile: out.clientCaFile === null ? null : cx.resolvePath(out.clientCaFile),
    clientAuth: out.clientAuth,
  };
}

// rate_limit { rps <float>; burst <int> } — burst defaults to ceil(rps), at least 1.
export function compileRateLimit(cx: CompileContext, d: Directive, where: string): RateLimit | undefined {
  let rps: number | undefined;
  let rpsWritten = false;
  let burst: number | undefined;
  readBareBlock(cx, d, where, {
    rps: {
      handle: (r) => {
        rpsWritten = true;
        const a = singleArg(cx, r, "rps <number>");
        const v = a && decodeNumber(cx, a, "rps", 0.001, 1e9);
        if (v !== undefined) rps = v;
      },
    },
    burst: scalar.int(cx, "burst", 1, 1e9, (v) => (burst = v)),
  });
  // An rps that was written but invalid has its own error already.
  if (rps === undefined) return d.block && !rpsWritten && !cx.failedWithin(d, "rps") ? cx.error(spanOf(d), "missing_directive", "rps in the block", `${where}: rps is required`) : undefined;
  return { rps, burst: burst ?? Math.max(1, Math.ceil(rps)) };
}
