// `keep serve`: one HTTPS listener (TLS 1.2+, no plaintext socket), the policy file (re-read on
// SIGHUP; an invalid one keeps the old policy), the data directory and the audit log.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { join } from "node:path";
import { AuditLog } from "./audit.js";
import { loadPolicy, Policy, PolicyError } from "./policy.js";
import { answerMalformed } from "./respond.js";
import { handler } from "./routes.js";
import { SecretStore } from "./store.js";

export interface ServeOptions {
  listen: string;
  tlsCert: string;
  tlsKey: string;
  policy: string;
  data: string;
  auditLog?: string;
  enableExport: boolean;
}

export class StartupError extends Error {}

export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(listen);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new StartupError(`--listen must be HOST:PORT, not ${JSON.stringify(listen)}`);
  return { host: m[1] ?? m[2], port };
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new StartupError(`cannot read the TLS ${what} ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

export interface RunningServer {
  server: Server;
  url: string;
  stop(): Promise<void>;
}

export async function startServer(opts: ServeOptions, log: (line: string) => void): Promise<RunningServer> {
  const { host, port } = parseListen(opts.listen);
  const cert = readPem(opts.tlsCert, "certificate");
  const key = readPem(opts.tlsKey, "key");
  let policy: Policy;
  try {
    policy = loadPolicy(opts.policy);
  } catch (error) {
    throw error instanceof PolicyError ? new StartupError(error.message) : error;
  }
  const store = new SecretStore(opts.data);
  let audit: AuditLog;
  const auditFile = opts.auditLog ?? join(opts.data, "audit.log");
  try {
    audit = new AuditLog(auditFile);
  } catch (error) {
    throw new StartupError(`cannot open the audit log ${auditFile} for appending (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  let server: Server;
  try {
    server = createServer({ cert, key, minVersion: "TLSv1.2" });
  } catch (error) {
    throw new StartupError(`the TLS certificate or key is unusable (${(error as Error).message.split("\n")[0]})`);
  }
  server.on("request", handler({ store, policy: () => policy, audit, exportEnabled: opts.enableExport, log }));
  server.on("clientError", answerMalformed);
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => reject(new StartupError(`cannot listen on ${opts.listen} (${error.code ?? error.message})`)));
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === "object" && address ? address.port : port;
  const onHup = (): void => {
    try {
      policy = loadPolicy(opts.policy);
      log(`keep: policy reloaded from ${opts.policy}`);
    } catch (error) {
      log(`keep: policy reload failed, keeping the previous policy: ${(error as Error).message}`);
    }
  };
  process.on("SIGHUP", onHup);
  const stop = async (): Promise<void> => {
    process.off("SIGHUP", onHup);
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    audit.close();
    store.close();
  };
  return { server, url: `https://${host.includes(":") ? `[${host}]` : host}:${bound}`, stop };
}
