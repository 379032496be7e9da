import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Directive } from "../../grammar/index.js";
import { tlsFileKind, tlsFileProblem } from "../tls-files.js";
import { readBareBlock, readBlock, scalar, singleArg } from "../block-reader.js";
import { nameOf, spanOf, type CompileContext } from "../context.js";
import { DEFAULTS } from "../defaults.js";
import type { AccessLogConfig, LogLevel, LogOutput, MetricsConfig, ObservabilityConfig, RuntimeLogConfig, TracingConfig } from "../ir.js";
import { decodeBool, decodeHeaderName, decodeHeaderValue, decodeHttpUrl, decodeListen, decodeOneOf, decodePath, expectArgs, expectNoBlock } from "../values.js";
import { defaultListen } from "./apis.js";
import { LOG_LEVELS } from "../reference.js";

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
const LEVELS = LOG_LEVELS;

// observability { access_log on|off|{…}; runtime_log <level>|{…}; metrics on|off|{…}; tracing on|off|{…} }
export function compileObservability(cx: CompileContext, d: Directive | undefined): ObservabilityConfig {
  const out: Mutable<ObservabilityConfig> = {
    // docs/spoolfile.md "`observability`": access log on to stderr; runtime log info to stderr; metrics only when configured.
    accessLog: { enabled: true, output: { kind: "stderr" }, format: "json" },
    runtimeLog: { level: "info", output: { kind: "stderr" }, format: "json" },
    metrics: { enabled: false, listen: defaultListen(DEFAULTS.metricsListen), prefix: DEFAULTS.metricsPrefix },
    tracing: DEFAULTS.tracing,
  };
  if (!d) return out;
  readBareBlock(cx, d, "observability", {
    access_log: { handle: (a) => (out.accessLog = compileAccessLog(cx, a)) },
    runtime_log: { handle: (r) => (out.runtimeLog = compileRuntimeLog(cx, r)) },
    metrics: { handle: (m) => (out.metrics = compileMetrics(cx, m)) },
    tracing: { handle: (t) => (out.tracing = compileTracing(cx, t)) },
  });
  return out;
}

/**
 * Why `spool run` could not open the log file at `path` (it creates missing directories, relative to
 * its working directory, and appends): the path is a directory, or an existing ancestor is not one.
 */
function logPathProblem(path: string): string | undefined {
  const full = resolve(path);
  try {
    if (statSync(full).isDirectory()) return "it is a directory";
    return undefined;
  } catch {
    // Not there yet: spool run creates it, if its nearest existing ancestor is a directory.
  }
  for (let dir = dirname(full); ; dir = dirname(dir)) {
    try {
      return statSync(dir).isDirectory() ? undefined : `${dir} is not a directory`;
    } catch {
      if (dirname(dir) === dir) return undefined;
    }
  }
}

/** Reads the shared `output`/`path`/`format` keys of a log block. */
function logOutputRules(cx: CompileContext, state: { output: "stdout" | "stderr" | "file"; path: string | null }) {
  return {
    output: { handle: (o: Directive) => { const a = singleArg(cx, o, "output stdout|stderr|file"); const v = a && decodeOneOf(cx, a, "output", ["stdout", "stderr", "file"] as const); if (v) state.output = v; } },
    path: scalar.text(cx, "path", (v) => (state.path = v)),
    format: { handle: (f: Directive) => { const a = singleArg(cx, f, "format json"); if (a) decodeOneOf(cx, a, "format", ["json"] as const); } },
  };
}

function toOutput(cx: CompileContext, d: Directive, state: { output: "stdout" | "stderr" | "file"; path: string | null }): LogOutput {
  if (state.output === "file") {
    if (!state.path) {
      cx.error(spanOf(d), "missing_directive", "a path for output file", `${nameOf(d)}: output file needs a path`);
      return { kind: "stderr" };
    }
    const problem = logPathProblem(state.path);
    if (problem) cx.secretProblem(spanOf(d), "invalid_value", `a log file path that can be created (${problem})`, `${nameOf(d)}: log file ${state.path} cannot be opened: ${problem}`);
    return { kind: "file", path: state.path };
  }
  return { kind: state.output };
}

function compileAccessLog(cx: CompileContext, d: Directive): AccessLogConfig {
  if (!d.block) {
    if (!expectArgs(cx, d, 1, 1, "access_log on|off or access_log { … }")) return { enabled: true, output: { kind: "stderr" }, format: "json" };
    return { enabled: decodeBool(cx, d.args[0], "access_log") ?? true, output: { kind: "stderr" }, format: "json" };
  }
  expectArgs(cx, d, 0, 0, "access_log { … }");
  const state = { enabled: true, output: "stderr" as "stdout" | "stderr" | "file", path: null as string | null };
  readBlock(cx, d, "access_log", { enabled: scalar.bool(cx, "enabled", (v) => (state.enabled = v)), ...logOutputRules(cx, state) });
  return { enabled: state.enabled, output: toOutput(cx, d, state), format: "json" };
}

function compileRuntimeLog(cx: CompileContext, d: Directive): RuntimeLogConfig {
  if (!d.block) {
    if (!expectArgs(cx, d, 1, 1, "runtime_log <level> or runtime_log { … }")) return { level: "info", output: { kind: "stderr" }, format: "json" };
    return { level: decodeOneOf(cx, d.args[0], "runtime_log", LEVELS) ?? "info", output: { kind: "stderr" }, format: "json" };
  }
  expectArgs(cx, d, 0, 0, "runtime_log { … }");
  const state = { level: "info" as LogLevel, output: "stderr" as "stdout" | "stderr" | "file", path: null as string | null };
  readBlock(cx, d, "runtime_log", {
    level: { handle: (l) => { const a = singleArg(cx, l, "level <level>"); const v = a && decodeOneOf(cx, a, "level", LEVELS); if (v) state.level = v; } },
    ...logOutputRules(cx, state),
  });
  return { level: state.level, output: toOutput(cx, d, state), format: "json" };
}

function compileMetrics(cx: CompileContext, d: Directive): MetricsConfig {
  const out: Mutable<MetricsConfig> = { enabled: true, listen: defaultListen(DEFAULTS.metricsListen), prefix: DEFAULTS.metricsPrefix };
  if (!d.block) {
    if (expectArgs(cx, d, 1, 1, "metrics on|off or metrics { … }")) out.enabled = decodeBool(cx, d.args[0], "metrics") ?? true;
    return out;
  }
  expectArgs(cx, d, 0, 0, "metrics { … }");
  readBlock(cx, d, "metrics", {
    enabled: scalar.bool(cx, "enabled", (v) => (out.enabled = v)),
    listen: { handle: (l) => { const a = singleArg(cx, l, "listen <addr>"); const v = a && decodeListen(cx, a, "metrics listen"); if (v) out.listen = v; } },
    prefix: { handle: (p) => { const a = singleArg(cx, p, "prefix /path"); const v = a && decodePath(cx, a, "metrics prefix"); if (v) out.prefix = v; } },
  });
  return out;
}

// tracing { enabled; collector; url_path; timeout; compression; insecure; proxy_url;
//           tls { ca_file; cert_file; key_file; server_name; insecure_skip_verify };
//           retry { enabled; initial_interval; max_interval; max_elapsed_time }; header "N" "V"… }
function compileTracing(cx: CompileContext, d: Directive): TracingConfig {
  const base = DEFAULTS.tracing;
  if (!d.block) {
    const enabled = expectArgs(cx, d, 1, 1, "tracing on|off or tracing { … }") ? decodeBool(cx, d.args[0], "tracing") ?? false : false;
    // The shorthand names no collector: refused like the block form without one, not accepted and then silently off.
    if (enabled) cx.error(spanOf(d), "missing_directive", "a collector URL for enabled tracing", 'tracing: enabled tracing needs a collector URL: tracing { enabled on; collector "https://…" }');
    return { ...base, enabled };
  }
  expectArgs(cx, d, 0, 0, "tracing { … }");
  const out: Mutable<TracingConfig> = { ...base, tls: { ...base.tls }, retry: { ...base.retry }, headers: [] };
  const tls = out.tls as Mutable<TracingConfig["tls"]>;
  const retry = out.retry as Mutable<TracingConfig["retry"]>;
  const headers: [string, string][] = [];
  readBlock(cx, d, "tracing", {
    enabled: scalar.bool(cx, "enabled", (v) => (out.enabled = v)),
    collector: { handle: (c) => { const a = singleArg(cx, c, "collector <url>"); const v = a && decodeHttpUrl(cx, a, "collector", { allowCredentials: true }); if (v) out.collector = v; } },
    url_path: { handle: (p) => { const a = singleArg(cx, p, "url_path /path"); const v = a && decodePath(cx, a, "url_path"); if (v) out.urlPath = v; } },
    timeout: scalar.duration(cx, "timeout", (v) => (out.timeoutMs = v!), { positive: true }),
    compression: { handle: (c) => { const a = singleArg(cx, c, "compression none|gzip"); const v = a && decodeOneOf(cx, a, "compression", ["none", "gzip"] as const); if (v) out.compression = v; } },
    insecure: scalar.bool(cx, "insecure", (v) => (out.insecure = v)),
    proxy_url: {
      handle: (p) => {
        const a = singleArg(cx, p, "proxy_url <url>");
        const v = a && decodeHttpUrl(cx, a, "proxy_url", { allowCredentials: true });
        // The exporter speaks plain HTTP to the proxy (CONNECT) and TLS to the collector through the tunnel.
        if (v && a && !v.startsWith("http://")) cx.error(a.span, "conflict", "an http:// proxy URL (CONNECT)", "tracing: proxy_url must be an http:// proxy; the collector's TLS runs through its CONNECT tunnel");
        else if (v) out.proxyUrl = v;
      },
    },
    tls: {
      handle: (t) =>
        readBareBlock(cx, t, "tracing tls", {
          ca_file: scalar.text(cx, "ca_file", (v) => (tls.caFile = v)),
          cert_file: scalar.text(cx, "cert_file", (v) => (tls.certFile = v)),
          key_file: scalar.text(cx, "key_file", (v) => (tls.keyFile = v)),
          server_name: scalar.text(cx, "server_name", (v) => (tls.serverName = v)),
          insecure_skip_verify: scalar.bool(cx, "insecure_skip_verify", (v) => (tls.insecureSkipVerify = v)),
        }),
    },
    retry: {
      handle: (r) =>
        readBareBlock(cx, r, "tracing retry", {
          enabled: scalar.bool(cx, "enabled", (v) => (retry.enabled = v)),
          initial_interval: scalar.duration(cx, "initial_interval", (v) => (retry.initialIntervalMs = v!), { positive: true }),
          max_interval: scalar.duration(cx, "max_interval", (v) => (retry.maxIntervalMs = v!), { positive: true }),
          max_elapsed_time: scalar.duration(cx, "max_elapsed_time", (v) => (retry.maxElapsedTimeMs = v!), { positive: true }),
        }),
    },
    header: {
      repeatable: true,
      handle: (h) => {
        if (!expectArgs(cx, h, 2, 2, 'header "Name" "value"') || !expectNoBlock(cx, h)) return;
        const name = decodeHeaderName(cx, h.args[0], "tracing header");
        const value = decodeHeaderValue(cx, h.args[1], "tracing header");
        if (name !== undefined && value !== undefined) headers.push([name, value]);
      },
    },
  });
  out.headers = headers;
  // The exporter reads these files when `spool run` starts it; one it cannot read or parse is a
  // tracing init failure (counted and logged, tracing stays off, the server runs: docs/operations.md
  // "Tracing"), so `spool run` does not refuse them: a plain warning, positioned.
  for (const [name, path] of [["ca_file", tls.caFile], ["cert_file", tls.certFile], ["key_file", tls.keyFile]] as const) {
    if (!path) continue;
    const read = cx.readFile(path);
    const reason = "reason" in read ? read.reason : tlsFileProblem(tlsFileKind(name), read.text);
    if (reason) cx.warning(spanOf(d), "file_unreadable", `a readable tracing tls ${name} ${path} (${reason})`, `tracing tls: ${name} ${path} cannot be read: ${reason}`);
  }
  if (out.enabled && !out.collector && cx.failedWithin(d, "collector")) {
    // The collector has its own error.
  } else if (out.enabled && !out.collector) cx.error(spanOf(d), "missing_directive", "a collector URL for enabled tracing", "tracing: enabled tracing needs a collector URL");
  if (out.collector?.startsWith("http://") && !out.insecure) {
    cx.error(spanOf(d), "conflict", "an https collector URL, or insecure on", "tracing: the collector URL is plain http; set insecure on to allow it");
  }
  return out;
}
