// The admin tools (docs/mcp.md "Tools"): config_apply, the management endpoint mapping and
// rotate_secret. The mapping runs the Admin API's own operation (on the SQLite file, or on the
// running instance); rotate_secret always asks the running instance, which holds the sealing key.
import { readFile } from "node:fs/promises";
import { compileSpoolfile, configFingerprint, parseDurationMs, writeFileAtomically } from "../../compiler/index.js";
import type { ApplyConfigOutcome } from "../../runtime/admin/deps.js";
import { checkInstant } from "./args.js";
import { configPathOf, diagnosticViews } from "./config-tools.js";
import type { CallContext } from "./context.js";
import { adminErrorMessage } from "./proxy.js";
import { reloadInstance } from "./runtime-control.js";
import { AUDIT, LABEL, object, PATH, str } from "./schema.js";
import { ToolError, type Args, type ToolDef, type ToolOutcome } from "./tool.js";

const RELOAD_TIMEOUT = { reload_timeout: str("How long a reload may take, e.g. 5s (default 5s)") };
const DEFAULT_RELOAD_TIMEOUT_MS = 5000;

export function durationArg(args: Args, key: string, fallbackMs: number, maxMs = 600_000): number {
  const text = args[key];
  if (text === undefined) return fallbackMs;
  const ms = parseDurationMs(text as string);
  if (ms === undefined || ms <= 0 || ms > maxMs) throw new ToolError(`argument ${JSON.stringify(key)} must be a duration such as 5s (at most ${maxMs / 1000}s), got ${JSON.stringify(text)}`);
  return ms;
}

const configApply: ToolDef = {
  name: "config_apply",
  description: "Check a new Spoolfile and, by mode, write it (atomically) and reload the instance (SIGHUP, proved by the config fingerprint; restored on timeout)",
  role: "admin",
  gate: "mutations",
  mutating: true,
  input: object(
    { content: str("The new Spoolfile text"), ...PATH, mode: str("preview_only (default), write_only or write_and_reload", { enum: ["preview_only", "write_only", "write_and_reload"] }), ...RELOAD_TIMEOUT, ...AUDIT },
    ["content", "reason"],
  ),
  check: (args) => void durationArg(args, "reload_timeout", DEFAULT_RELOAD_TIMEOUT_MS),
  run: (args, ctx) => ctx.state.serializeFileWrite(() => applyConfig(args, ctx)),
};

/** config_apply: check, then by mode write and reload (docs/mcp.md). */
async function applyConfig(args: Args, ctx: CallContext): Promise<ToolOutcome> {
  const path = configPathOf(ctx.session, args);
  const mode = (args.mode as string | undefined) ?? "preview_only";
  const content = args.content as string;
  const timeoutMs = durationArg(args, "reload_timeout", DEFAULT_RELOAD_TIMEOUT_MS);
  const contentSha256 = configFingerprint(content);
  const compiled = compileSpoolfile(content, path, { env: process.env, strictSecrets: mode !== "preview_only" });
  const errors = diagnosticViews(compiled.diagnostics, "error");
  const warnings = diagnosticViews(compiled.diagnostics, "warning");
  const answer = (outcome: string, fields: { ok: boolean; applied: boolean; reloaded: boolean; rolled_back: boolean }) => ({
    result: { ...fields, path, mode, errors, warnings, audit: ctx.auditResult() },
    metadata: { kind: "config_mutation", operation: "config_apply", mode, outcome, content_sha256: contentSha256 },
  });
  if (!compiled.config || errors.length > 0) return answer("invalid", { ok: false, applied: false, reloaded: false, rolled_back: false });
  if (mode === "preview_only") return answer("previewed", { ok: true, applied: false, reloaded: false, rolled_back: false });
  const previous = await readFile(path).catch(() => undefined);
  await writeFileAtomically(path, content).catch((error: Error) => {
    throw new ToolError(`cannot write ${path}: ${error.message}; nothing was changed`, { kind: "config_mutation", operation: "config_apply", mode, outcome: "write_failed", content_sha256: contentSha256 });
  });
  if (mode === "write_only") return answer("written", { ok: true, applied: true, reloaded: false, rolled_back: false });
  const reloaded = await reloadInstance(ctx.state, compiled.config, contentSha256, timeoutMs);
  if (reloaded.ok) return answer("reloaded", { ok: true, applied: true, reloaded: true, rolled_back: false });
  if (previous !== undefined) await writeFileAtomically(path, previous);
  errors.push({ file: path, line: 1, col: 1, message: `${reloaded.detail}; the previous file was restored` });
  return answer("rolled_back", { ok: false, applied: false, reloaded: false, rolled_back: true });
}

/** SQLite binding of a management write: the rewritten text must compile, and with write_and_reload the instance must serve it. */
function applyFor(ctx: CallContext, mode: string, timeoutMs: number): (text: string) => Promise<ApplyConfigOutcome> {
  return async (text) => {
    const compiled = compileSpoolfile(text, ctx.session.configPath, { env: process.env, strictSecrets: true });
    if (!compiled.config) {
      const first = diagnosticViews(compiled.diagnostics, "error")[0];
      return { ok: false, detail: first ? `${first.file}:${first.line}:${first.col}: ${first.message}` : "the rewritten config does not compile" };
    }
    if (mode !== "write_and_reload") return { ok: true };
    const reloaded = await reloadInstance(ctx.state, compiled.config, configFingerprint(text), timeoutMs);
    return reloaded.ok ? { ok: true } : { ok: false, detail: reloaded.detail };
  };
}

function mappingTool(action: "upsert" | "delete"): ToolDef {
  const upsert = action === "upsert";
  return {
    name: `management_endpoint_${action}`,
    description: upsert
      ? "Map a managed endpoint (application + endpoint_name) to a route: the Spoolfile's labels rewritten (Admin PUT /applications/{a}/endpoints/{e})"
      : "Remove a managed endpoint's labels from its route (Admin DELETE /applications/{a}/endpoints/{e})",
    role: "admin",
    gate: "mutations",
    mutating: true,
    input: object(
      {
        application: LABEL("Application"),
        endpoint_name: LABEL("Endpoint name"),
        ...(upsert ? { route: str('Route path, starting with "/"', { minLength: 1 }) } : {}),
        ...PATH,
        mode: str("write_only (default) or write_and_reload (SQLite; an instance behind the Admin API always reloads)", { enum: ["write_only", "write_and_reload"] }),
        ...RELOAD_TIMEOUT,
        ...AUDIT,
      },
      upsert ? ["application", "endpoint_name", "route", "reason"] : ["application", "endpoint_name", "reason"],
    ),
    check(args) {
      if (upsert && !(args.route as string).startsWith("/")) throw new ToolError(`argument "route" must start with "/", got ${JSON.stringify(args.route)}`);
      durationArg(args, "reload_timeout", DEFAULT_RELOAD_TIMEOUT_MS);
    },
    async run(args, ctx) {
      configPathOf(ctx.session, args);
      const mode = (args.mode as string | undefined) ?? "write_only";
      const loaded = ctx.config();
      const local = loaded.config.backend === "sqlite";
      const application = args.application as string;
      const endpointName = args.endpoint_name as string;
      const body = await ctx.state.serializeFileWrite(() => ctx.admin({
        method: upsert ? "PUT" : "DELETE",
        path: `/applications/${encodeURIComponent(application)}/endpoints/${encodeURIComponent(endpointName)}`,
        body: upsert ? { route: args.route } : undefined,
        audit: ctx.audit,
        applyConfigText: applyFor(ctx, mode, durationArg(args, "reload_timeout", DEFAULT_RELOAD_TIMEOUT_MS)),
      }));
      const applied = body.applied === true;
      const endpoint = (body.endpoint ?? {}) as { route?: string };
      const reloaded = applied && (!local || mode === "write_and_reload");
      return {
        result: { ok: true, action: body.action, application, endpoint_name: endpointName, route: endpoint.route ?? args.route, applied, reloaded, audit: ctx.auditResult() },
        metadata: { kind: "config_mutation", operation: upsert ? "upsert_endpoint" : "delete_endpoint", mode, outcome: String(body.action) },
      };
    },
  };
}

const SECRET_LABEL = str("Secret pool id (a label)", { minLength: 1, maxLength: 128 });

const rotateSecret: ToolDef = {
  name: "rotate_secret",
  description: "Runtime HMAC secret versions of a `runtime on` pool: add, list or delete (Admin /secrets/{name}); the value is never shown",
  role: "admin",
  gate: "mutations",
  mutating: true,
  input: object(
    {
      operation: str("add, list or delete", { enum: ["add", "list", "delete"] }),
      name: SECRET_LABEL,
      value: str("The new secret (add)", { minLength: 1 }),
      not_before: str("RFC 3339 (add; default now)"),
      not_after: str("RFC 3339 (add)"),
      id: str("Version id (delete)", { minLength: 1, maxLength: 128 }),
      ...AUDIT,
    },
    ["operation", "name"],
  ),
  check(args) {
    const operation = args.operation as string;
    const refuse = (key: string) => {
      throw new ToolError(`argument ${JSON.stringify(key)} is not taken by rotate_secret ${operation}`);
    };
    const need = (key: string) => {
      if (args[key] === undefined) throw new ToolError(`missing required argument ${JSON.stringify(key)} (rotate_secret ${operation})`);
    };
    if (operation === "list") for (const key of ["reason", "value", "id", "not_before", "not_after", "actor", "request_id"]) if (args[key] !== undefined) refuse(key);
    if (operation === "add") {
      need("value");
      need("reason");
      if (args.id !== undefined) refuse("id");
      checkInstant(args, "not_before");
      checkInstant(args, "not_after");
    }
    if (operation === "delete") {
      need("id");
      need("reason");
      for (const key of ["value", "not_before", "not_after"]) if (args[key] !== undefined) refuse(key);
    }
  },
  async run(args, ctx) {
    const operation = args.operation as "add" | "list" | "delete";
    const name = args.name as string;
    const base = `/secrets/${encodeURIComponent(name)}`;
    const spec =
      operation === "add"
        ? { method: "POST" as const, path: base, body: Object.fromEntries(["value", "not_before", "not_after"].filter((k) => args[k] !== undefined).map((k) => [k, args[k]])) }
        : operation === "list"
          ? { method: "GET" as const, path: base }
          : { method: "DELETE" as const, path: `${base}/${encodeURIComponent(args.id as string)}` };
    const response = await ctx.state.apiCall(ctx.config().config, { ...spec, audit: ctx.audit });
    const metadata = { kind: "secret_mutation", operation, pool: name, ...(args.id !== undefined ? { secret_id: args.id } : {}) };
    if (response.status < 200 || response.status >= 300) throw new ToolError(adminErrorMessage(response.status, response.body), metadata);
    const id = operation === "add" ? (response.body as { id?: unknown } | null)?.id : args.id;
    const result: Record<string, unknown> = { operation, name, ...(typeof id === "string" ? { id } : {}), response: response.body };
    if (ctx.audit) result.audit = ctx.auditResult();
    return { result, metadata: { ...metadata, ...(typeof id === "string" ? { secret_id: id } : {}) } };
  },
};

export const ADMIN_TOOLS: ToolDef[] = [configApply, mappingTool("upsert"), mappingTool("delete"), rotateSecret];
