// What the exporter does, as plain values from the IR (docs/operations.md "Tracing"): the export URL,
// the headers sent on every export, compression, the timeout, the proxy and the retry policy. Pure:
// the TLS files are read by tracing.ts (collectorTls), the one place tracing touches the disk.
import type { TracingConfig } from "../../compiler/ir.js";

/** The OTLP/HTTP traces path a collector URL without a path of its own gets. */
export const DEFAULT_TRACES_PATH = "/v1/traces";

export interface RetryPolicy {
  readonly initialIntervalMs: number;
  readonly maxIntervalMs: number;
  readonly maxElapsedTimeMs: number;
}

export interface ProxySettings {
  readonly host: string;
  readonly port: number;
  /** `Proxy-Authorization` from the proxy URL's userinfo. */
  readonly authorization: string | null;
}

export interface ExportSettings {
  /** scheme://host:port/path, without userinfo or query. */
  readonly url: URL;
  /** Sent on every export: Content-Type, the `header` directives, Authorization from the collector's userinfo. */
  readonly headers: Readonly<Record<string, string>>;
  readonly gzip: boolean;
  readonly timeoutMs: number;
  readonly proxy: ProxySettings | null;
  /** Null: a failed export is dropped at once. */
  readonly retry: RetryPolicy | null;
}

/**
 * The export URL: the collector's scheme://host:port, then `url_path` when written, else the
 * collector URL's own path unless it is empty or `/`, else /v1/traces. The query is not sent.
 */
export function exportUrl(collector: string, urlPath: string | null): URL {
  const parsed = new URL(collector);
  const path = urlPath ?? (parsed.pathname === "" || parsed.pathname === "/" ? DEFAULT_TRACES_PATH : parsed.pathname);
  return new URL(path, `${parsed.protocol}//${parsed.host}`);
}

export function exportSettings(config: TracingConfig): ExportSettings {
  if (!config.collector) throw new Error("tracing has no collector URL");
  const collector = new URL(config.collector);
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  const userinfo = basicAuthorization(collector);
  if (userinfo) headers.Authorization = userinfo;
  // The `header` directives come last: a written Authorization wins over the URL's userinfo.
  for (const [name, value] of config.headers) headers[name] = value;
  return {
    url: exportUrl(config.collector, config.urlPath),
    headers,
    gzip: config.compression === "gzip",
    timeoutMs: config.timeoutMs,
    proxy: config.proxyUrl ? proxySettings(new URL(config.proxyUrl)) : null,
    retry: config.retry.enabled
      ? { initialIntervalMs: config.retry.initialIntervalMs, maxIntervalMs: Math.max(config.retry.maxIntervalMs, config.retry.initialIntervalMs), maxElapsedTimeMs: config.retry.maxElapsedTimeMs }
      : null,
  };
}

function proxySettings(proxy: URL): ProxySettings {
  const port = proxy.port ? Number(proxy.port) : proxy.protocol === "https:" ? 443 : 80;
  return { host: proxy.hostname.replace(/^\[|\]$/g, ""), port, authorization: basicAuthorization(proxy) };
}

function basicAuthorization(url: URL): string | null {
  if (!url.username && !url.password) return null;
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return `Basic ${Buffer.from(credentials).toString("base64")}`;
}

/** The delay before retry number `retry` (1 = the first retry): initial × 2^(retry−1), at most max_interval. */
export function backoffMs(policy: RetryPolicy, retry: number): number {
  return Math.min(policy.maxIntervalMs, policy.initialIntervalMs * 2 ** Math.min(retry - 1, 30));
}
