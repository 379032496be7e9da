// The metrics listener (observability `metrics { listen; prefix }`, default /metrics): Prometheus
// text exposition of one registry, nothing else on that listener.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Registry } from "prom-client";
import { apiError, shortPath } from "../errors.js";

export function metricsHandler(registry: Registry, options: { path: string }) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "").split("?", 1)[0];
    if (path !== options.path) throw apiError("not_found", `no metrics at ${shortPath(path)}; scrape ${options.path}`);
    if (req.method !== "GET" && req.method !== "HEAD") {
      throw apiError("method_not_allowed", "metrics are read with GET", { headers: { Allow: "GET, HEAD" } });
    }
    // prom-client writes a NaN sample as "Nan"; the exposition format's token is "NaN" (Prometheus
    // reads any case, strict and OpenMetrics parsers do not). Only a sample value ends a line so.
    const text = (await registry.metrics()).replace(/ Nan$/gm, " NaN");
    res.statusCode = 200;
    res.setHeader("Content-Type", registry.contentType);
    res.setHeader("Content-Length", Buffer.byteLength(text));
    res.end(req.method === "HEAD" ? undefined : text);
  };
}
