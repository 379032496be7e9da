// Mounts createAdminApi on a real node:http server on 127.0.0.1:0 over a real store (SQLite file in
// a temp dir, or memory), the way the app does: the handler gets the path and a false answer is 404.
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import type { SpoolConfig } from "../../compiler/ir.js";
import { createAdminApi, type AuditRecord, type ApplyConfigOutcome } from "../../runtime/admin/index.js";
import { TestClock } from "../../runtime/time/clock.js";
import { apiError } from "../../runtime/errors.js";
import { sendError } from "../../runtime/http/respond.js";
import { requestPath } from "../../runtime/http/listeners.js";
import { createMetrics, type SpoolMetrics } from "../../runtime/observability/metrics.js";
import { openStore } from "../../runtime/store/open.js";
import type { NewMessage } from "../../runtime/store/records.js";
import type { Store } from "../../runtime/store/store.js";
import { makeTempDir } from "../helpers/temp-dir.js";

export type Backend = "sqlite" | "memory";

export interface HarnessOptions {
  config: SpoolConfig;
  backend?: Backend;
  maxDepth?: number;
  configPath?: string;
  /** Default: accept the text and keep serving `config` (tests that rewrite pass a compiling one). */
  applyConfigText?: (text: string, harness: Harness) => Promise<ApplyConfigOutcome>;
}

export interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body text, sent as is. */
  rawBody?: string;
  headers?: Record<string, string>;
  /** X-Spool-Audit-Reason; default "test" on POST/PUT/DELETE, null to omit. */
  reason?: string | null;
}

export interface Harness {
  readonly baseUrl: string;
  readonly store: Store;
  readonly clock: TestClock;
  readonly audits: AuditRecord[];
  readonly metrics: SpoolMetrics;
  readonly unexpected: unknown[];
  config: SpoolConfig;
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  seed(messages: NewMessage[]): Promise<void>;
  close(): Promise<void>;
}

const dir = makeTempDir("admin");
process.on("exit", () => dir.cleanup());
let counter = 0;

export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const clock = new TestClock();
  const backend = options.backend ?? "sqlite";
  const store = await openStore(
    backend === "sqlite"
      ? { backend, sqlitePath: join(dir.path, `admin-${process.pid}-${++counter}.db`), maxDepth: options.maxDepth ?? null }
      : { backend, maxDepth: options.maxDepth ?? null },
    { clock },
  );
  const metrics = createMetrics({ backend, version: "0.0.0", clock, queueSnapshot: async () => ({ depth: { queued: 0, leased: 0, dead: 0 }, oldestQueuedAgeSeconds: 0, readyLagSeconds: 0, leasesActiveByRoute: {} }) });
  const audits: AuditRecord[] = [];
  const unexpected: unknown[] = [];
  let server: Server;
  const harness: Harness = {
    baseUrl: "",
    store,
    clock,
    audits,
    metrics,
    unexpected,
    config: options.config,
    async request(method, path, requestOptions = {}) {
      const headers: Record<string, string> = { ...requestOptions.headers };
      const reason = requestOptions.reason === undefined ? (method === "GET" ? null : "test") : requestOptions.reason;
      if (reason !== null) headers["X-Spool-Audit-Reason"] = reason;
      let body: string | undefined = requestOptions.rawBody;
      if (requestOptions.body !== undefined) {
        body = JSON.stringify(requestOptions.body);
        headers["Content-Type"] = "application/json";
      }
      const response = await fetch(harness.baseUrl + path, { method, headers, body });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text === "" ? undefined : JSON.parse(text);
      } catch {
        parsed = text;
      }
      return { status: response.status, body: parsed, headers: response.headers };
    },
    seed: (messages) => store.enqueue(messages),
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await store.close();
    },
  };
  const handle = createAdminApi({
    getConfig: () => harness.config,
    store,
    clock,
    audit: (record) => audits.push(record),
    metrics,
    configPath: options.configPath ?? join(dir.path, "absent-Spoolfile"),
    applyConfigText: (text) => (options.applyConfigText ? options.applyConfigText(text, harness) : Promise.resolve({ ok: true })),
    onUnexpectedError: (error) => unexpected.push(error),
  });
  server = createServer((req, res) => {
    // As the app's listener mounts do: the path without its query (the handler reads req.url's).
    handle(req, res, requestPath(req.url ?? "/")).then(
      (handled) => {
        if (!handled) sendError(res, apiError("not_found", `no admin endpoint ${req.url}`));
      },
      (error) => {
        unexpected.push(error);
        res.destroy();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("not bound");
  (harness as { baseUrl: string }).baseUrl = `http://127.0.0.1:${address.port}`;
  return harness;
}

export function bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

export function message(id: string, route: string, overrides: Partial<NewMessage> = {}): NewMessage {
  return { id, route, target: "pull", payload: bytes(`body of ${id}`), headers: { "content-type": "application/json" }, ...overrides };
}

export const b64 = (text: string) => Buffer.from(text).toString("base64");
