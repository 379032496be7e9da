// What a tool call works with (docs/mcp.md "Backends"): the Spoolfile read afresh, and the queue
// operations reached the way its backend allows. With SQLite the Admin API's own operations run
// here on the database file (runtime/admin/operations.ts), read-only unless mutations are on; with
// memory or PostgreSQL the same operations are asked of the running instance's Admin API.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { loadSpoolfile, logSafeDiagnostics, renderDiagnostic, type SpoolConfig } from "../../compiler/index.js";
import type { ApplyConfigOutcome, AdminDeps } from "../../runtime/admin/deps.js";
import { adminRequest, resolveAdminOperation, runAdminMutation } from "../../runtime/admin/operations.js";
import { answerStoreError, ApiError, toApiError } from "../../runtime/errors.js";
import { openSqliteBeside } from "../../runtime/store/open.js";
import { storeSpecFor } from "../../runtime/store/spec.js";
import type { Store } from "../../runtime/store/store.js";
import { systemClock } from "../../runtime/time/clock.js";
import { adminEndpoint, adminErrorMessage, proxyRequest, type ProxyResponse } from "./proxy.js";
import type { McpSession } from "./session.js";
import { ToolError } from "./tool.js";

export interface LoadedConfig {
  config: SpoolConfig;
  text: string;
  fingerprint: string;
}

/** Who and why, sent with every mutation as the Admin API's audit headers. */
export interface CallAudit {
  reason: string;
  actor: string;
  request_id?: string;
}

/** One Admin API operation as a queue tool asks for it. */
export interface AdminCallSpec {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Under the admin prefix, without the query. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  audit?: CallAudit;
  /** Per attempt (default 5 s). */
  timeoutMs?: number;
  /** SQLite binding of a management write: what "applied" means here (compile, and reload when asked). */
  applyConfigText?: (text: string) => Promise<ApplyConfigOutcome>;
}

export class SessionState {
  private store: { path: string; store: Store } | undefined;
  private fileWrites: Promise<unknown> = Promise.resolve();

  constructor(readonly session: McpSession) {}

  /** The config as compiled now; a file that does not compile is a tool error naming its first problem (masked). */
  loadConfig(): LoadedConfig {
    const loaded = loadSpoolfile(this.session.configPath, { env: process.env });
    if (!loaded.config || loaded.text === null || loaded.fingerprint === null) {
      const first = logSafeDiagnostics(loaded.diagnostics).find((d) => d.severity === "error");
      throw new ToolError(`the config ${this.session.configPath} does not compile, so its queue backend is unknown: ${first ? renderDiagnostic(first) : "unreadable"}`);
    }
    return { config: loaded.config, text: loaded.text, fingerprint: loaded.fingerprint };
  }

  /** The SQLite store beside the instance (opened once, kept for the session). */
  sqliteStore(config: SpoolConfig): Store {
    const path = resolve(this.session.dbPath);
    if (this.store?.path === path) return this.store.store;
    if (!existsSync(path)) throw new ToolError(`store unavailable: the SQLite database ${this.session.dbPath} does not exist (mcp serve never creates it; start spool run first)`);
    try {
      const store = openSqliteBeside(storeSpecFor(config, { sqlitePath: path }), systemClock, !this.session.enableMutations);
      this.store = { path, store };
      return store;
    } catch (error) {
      throw new ToolError(`store unavailable: ${(error as Error).message}`);
    }
  }

  /** One Spoolfile write at a time in this session (config_apply, the management mapping): two must not both read the same old text. */
  serializeFileWrite<T>(work: () => Promise<T>): Promise<T> {
    const next = this.fileWrites.then(work, work);
    this.fileWrites = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.store?.store.close().catch(() => undefined);
    this.store = undefined;
  }

  /** Runs one Admin API operation on this config's backend; answers its 200 body or throws the refusal. */
  async adminCall(loaded: LoadedConfig, spec: AdminCallSpec, viaApi = false): Promise<Record<string, unknown>> {
    if (loaded.config.backend === "sqlite" && !viaApi) return this.localCall(loaded, spec);
    const response = await this.apiCall(loaded.config, spec);
    if (response.status >= 200 && response.status < 300) return (response.body ?? {}) as Record<string, unknown>;
    throw new ToolError(adminErrorMessage(response.status, response.body));
  }

  /** The raw Admin API answer (rotate_secret shows it whole; instance tools read /healthz). */
  apiCall(config: SpoolConfig, spec: AdminCallSpec): Promise<ProxyResponse> {
    const headers: Record<string, string> = {};
    if (spec.audit) Object.assign(headers, auditHeaders(spec.audit, true));
    return proxyRequest(adminEndpoint(config), this.session.allowlist, {
      method: spec.method,
      pathWithQuery: spec.path + querySuffix(spec.query),
      body: spec.body,
      headers,
      timeoutMs: spec.timeoutMs,
    });
  }

  private async localCall(loaded: LoadedConfig, spec: AdminCallSpec): Promise<Record<string, unknown>> {
    const store = this.sqliteStore(loaded.config);
    let config = loaded.config;
    const deps: AdminDeps = {
      getConfig: () => config,
      store,
      clock: systemClock,
      // The MCP server writes its own audit line for the tool call.
      audit: () => {},
      configPath: this.session.configPath,
      applyConfigText: async (text) => {
        const outcome = spec.applyConfigText ? await spec.applyConfigText(text) : { ok: false as const, detail: "config writes are not available here" };
        if (outcome.ok) config = this.loadConfig().config;
        return outcome;
      },
    };
    const operation = resolveAdminOperation(spec.method, spec.path);
    if (operation.kind !== "read" && operation.kind !== "mutation") throw new ToolError(`no Admin operation ${spec.method} ${spec.path}`);
    const bodyBytes = Buffer.from(spec.body === undefined ? "" : JSON.stringify(spec.body));
    const query = new URLSearchParams(querySuffix(spec.query).slice(1));
    const request = adminRequest(deps, { method: spec.method, pathname: spec.path, query, headers: spec.audit ? auditHeaders(spec.audit, false) : {}, body: async () => bodyBytes }, operation.params);
    try {
      if (operation.kind === "read") return (await operation.handler(request)) as Record<string, unknown>;
      return (await runAdminMutation(request, operation.handler)).body ?? {};
    } catch (thrown) {
      const error = toApiError(answerStoreError(thrown, "admin"));
      if (error.code === "internal_error" && !(thrown instanceof ApiError)) {
        throw new ToolError(`code=internal_error detail=${(thrown as Error).message}`);
      }
      throw new ToolError(adminErrorMessage(error.status, error.toBody()));
    }
  }
}

/** The Admin API's audit headers; over HTTP a UTF-8 value travels as its bytes (the API decodes them back). */
function auditHeaders(audit: CallAudit, wire: boolean): Record<string, string> {
  const encode = (text: string) => (wire ? Buffer.from(text, "utf8").toString("latin1") : text);
  const headers: Record<string, string> = { "x-spool-audit-reason": encode(audit.reason), "x-spool-audit-actor": encode(audit.actor) };
  if (audit.request_id !== undefined) headers["x-request-id"] = encode(audit.request_id);
  return headers;
}

function querySuffix(query: AdminCallSpec["query"]): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

/** What one tools/call runs with. */
export class CallContext {
  private loaded: LoadedConfig | undefined;

  constructor(
    readonly state: SessionState,
    /** Set for a mutating tool: sent as the Admin API's audit headers. */
    readonly audit: CallAudit | undefined,
  ) {}

  get session(): McpSession {
    return this.state.session;
  }

  /** The config as compiled at this call (read once per call). */
  config(): LoadedConfig {
    return (this.loaded ??= this.state.loadConfig());
  }

  admin(spec: AdminCallSpec, viaApi = false): Promise<Record<string, unknown>> {
    return this.state.adminCall(this.config(), spec, viaApi);
  }

  /** The `audit` object of a mutation's result. */
  auditResult(): Record<string, string> {
    const audit = this.audit!;
    const result: Record<string, string> = { reason: audit.reason, actor: audit.actor };
    if (audit.request_id !== undefined) result.request_id = audit.request_id;
    result.principal = this.session.principal ?? "";
    return result;
  }
}
