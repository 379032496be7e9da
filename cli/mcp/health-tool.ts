// admin_health (docs/mcp.md "Tools"): what an assistant checks first: the config, the database
// file, the queue totals (from the SQLite file, or from the instance's /healthz) and the Admin API.
import { existsSync } from "node:fs";
import type { CallContext, LoadedConfig } from "./context.js";
import { adminEndpoint } from "./proxy.js";
import { object } from "./schema.js";
import type { ToolDef } from "./tool.js";

async function adminProbe(ctx: CallContext, loaded: LoadedConfig | undefined): Promise<Record<string, unknown>> {
  if (!loaded) return { checked: false, url: null, ok: false, status_code: null };
  const url = adminEndpoint(loaded.config).base.href.replace(/\/$/, "") + "/healthz";
  try {
    const response = await ctx.state.apiCall(loaded.config, { method: "GET", path: "/healthz" });
    return { checked: true, url, ok: response.status === 200, status_code: response.status };
  } catch (error) {
    return { checked: true, url, ok: false, status_code: null, error: (error as Error).message };
  }
}

export const healthTool: ToolDef = {
  name: "admin_health",
  description: "Config, database, queue totals and Admin API reachability at a glance",
  role: "read",
  mutating: false,
  input: object({}),
  async run(_args, ctx) {
    let loaded: LoadedConfig | undefined;
    let configError: string | undefined;
    try {
      loaded = ctx.config();
    } catch (error) {
      configError = (error as Error).message;
    }
    const dbExists = existsSync(ctx.session.dbPath);
    let dbReadable = false;
    let queue: Record<string, unknown> = { backend: loaded?.config.backend ?? null, source: null, ok: false, total: null, by_state: null, ...(configError ? { error: configError } : {}) };
    if (loaded?.config.backend === "sqlite") {
      try {
        const stats = await ctx.state.sqliteStore(loaded.config).queueStats();
        dbReadable = true;
        queue = { backend: "sqlite", source: "sqlite_local", ok: true, total: stats.total, by_state: { queued: stats.byState.queued, leased: stats.byState.leased, dead: stats.byState.dead } };
      } catch (error) {
        queue = { backend: "sqlite", source: "sqlite_local", ok: false, total: null, by_state: null, error: (error as Error).message };
      }
    } else if (loaded) {
      try {
        const response = await ctx.state.apiCall(loaded.config, { method: "GET", path: "/healthz", query: { details: 1 } });
        const diagnostics = (response.body as { diagnostics?: { queue?: { total?: number; by_state?: unknown } } } | null)?.diagnostics?.queue;
        queue = { backend: loaded.config.backend, source: "admin_api", ok: response.status === 200 && diagnostics !== undefined, total: diagnostics?.total ?? null, by_state: diagnostics?.by_state ?? null };
      } catch (error) {
        queue = { backend: loaded.config.backend, source: "admin_api", ok: false, total: null, by_state: null, error: (error as Error).message };
      }
    }
    const adminApi = await adminProbe(ctx, loaded);
    return { result: { ok: loaded !== undefined && queue.ok === true, config_readable: loaded !== undefined, db_exists: dbExists, db_readable: dbReadable, queue, admin_api: adminApi } };
  },
};
