// One HTTPS request to Keep. Trust is the given CA only, with verification always on (also under
// NODE_TLS_REJECT_UNAUTHORIZED=0: rejectUnauthorized is passed explicitly). No retries.
import { Agent, request } from "node:https";
import { KeepError } from "./errors.js";

export interface Connection {
  base: URL;
  token: string;
  ca: string | Buffer;
  timeoutMs: number;
  agent: Agent;
}

const MAX_RESPONSE = 256 * 1024 * 1024;

function makeAgent(ca: string | Buffer): Agent {
  return new Agent({ keepAlive: true, ca, rejectUnauthorized: true, minVersion: "TLSv1.2" });
}

/** A connection to one Keep server that trusts `ca` alone (the library and the consumer programs). */
export function connect(base: URL, token: string, ca: string | Buffer, timeoutMs: number): Connection {
  return { base, token, ca, timeoutMs, agent: makeAgent(ca) };
}

export interface Answer {
  status: number;
  body: unknown;
}

function transportError(error: NodeJS.ErrnoException, what: string): KeepError {
  const code = error.code ?? "ETRANSPORT";
  return new KeepError(`${what}: ${code}`, code);
}

export function call(conn: Connection, method: "GET" | "POST", route: string, body?: unknown): Promise<Answer> {
  const what = `${method} ${route}`;
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), "utf8");
  const basePath = conn.base.pathname.replace(/\/+$/, "");
  return new Promise((resolve, reject) => {
    const req = request({
      protocol: "https:",
      hostname: conn.base.hostname.replace(/^\[|\]$/g, ""),
      port: conn.base.port || 443,
      path: `${basePath}${route}`,
      method,
      agent: conn.agent,
      ca: conn.ca,
      rejectUnauthorized: true,
      headers: {
        Authorization: `Bearer ${conn.token}`,
        Accept: "application/json",
        ...(payload ? { "Content-Type": "application/json", "Content-Length": payload.length } : {}),
      },
    });
    req.setTimeout(conn.timeoutMs, () => req.destroy(Object.assign(new Error("timed out"), { code: "ETIMEDOUT" })));
    req.on("error", (error) => reject(transportError(error, what)));
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size > MAX_RESPONSE) req.destroy(Object.assign(new Error("response too large"), { code: "ERESPONSETOOLARGE" }));
        else chunks.push(c);
      });
      res.on("error", (error) => reject(transportError(error, what)));
      res.on("end", () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          return reject(new KeepError(`${what}: ${res.statusCode} with a body that is not JSON`, "bad_response", res.statusCode, res.statusCode === 503));
        }
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) return resolve({ status, body: parsed });
        const err = (parsed as { error?: { code?: unknown } })?.error;
        const code = typeof err?.code === "string" ? err.code : "bad_response";
        reject(new KeepError(`${what}: ${status} ${code}`, code, status));
      });
    });
    req.end(payload);
  });
}
