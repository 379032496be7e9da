// The config tools (docs/mcp.md "Tools"): parse, validate, compile, format and diff the --config
// file through the compiler, every value that can be a credential redacted (compiler/text-redact.ts)
// and every diagnostic in the log-safe form `spool run` logs (compiler/log-diagnostics.ts).
import { resolve } from "node:path";
import {
  compileSpoolfile,
  formatText,
  loadSpoolfile,
  logSafeDiagnostics,
  readSpoolfile,
  redactSpoolfileText,
  spoolfileOutline,
  unifiedDiff,
  type Diagnostic,
  type SpoolConfig,
} from "../../compiler/index.js";
import { bool, int, object, PATH, str } from "./schema.js";
import type { McpSession } from "./session.js";
import { ToolError, type Args, type ToolDef } from "./tool.js";

export interface DiagnosticView {
  file: string;
  line: number;
  col: number;
  message: string;
}

/** Position and a message without any value of the file. */
export function diagnosticViews(diagnostics: readonly Diagnostic[], severity: "error" | "warning"): DiagnosticView[] {
  return logSafeDiagnostics(diagnostics)
    .filter((d) => d.severity === severity)
    .map((d) => ({ file: d.span.file, line: d.span.line, col: d.span.col, message: d.message }));
}

/** `path` must be --config: the tools read and write that file only. */
export function configPathOf(session: McpSession, args: Args): string {
  const path = args.path as string | undefined;
  if (path !== undefined && resolve(path) !== resolve(session.configPath)) {
    throw new ToolError(`argument "path" must be the --config file ${session.configPath}, got ${JSON.stringify(path)}`);
  }
  return session.configPath;
}

/** The file's text, or a tool result saying why it cannot be read. */
function readText(path: string): { text: string } | { errors: DiagnosticView[] } {
  const read = readSpoolfile(path);
  if ("reason" in read) return { errors: [{ file: path, line: 1, col: 1, message: `cannot read config: ${read.reason}` }] };
  if ("diagnostic" in read) return { errors: diagnosticViews([read.diagnostic], "error") };
  return { text: read.text };
}

export function compileSummary(config: SpoolConfig): Record<string, unknown> {
  return {
    ingress_listen: config.ingress.listen.address,
    pull_listen: config.pullApi.listen.address,
    admin_listen: config.adminApi.listen.address,
    queue_backend: config.backend,
    route_count: config.routes.length,
    pull_route_count: config.routes.filter((r) => r.mode.kind === "pull").length,
    deliver_route_count: config.routes.filter((r) => r.mode.kind === "deliver").length,
    managed_route_count: config.routes.filter((r) => r.application !== null && r.endpointName !== null).length,
  };
}

const readTool = (name: string, description: string, input: ReturnType<typeof object>, run: ToolDef["run"]): ToolDef => ({ name, description, role: "read", mutating: false, input, run });

export const CONFIG_READ_TOOLS: ToolDef[] = [
  readTool("config_parse", "Parse the Spoolfile: errors and its directive tree (values that can be credentials redacted)", object({ ...PATH }), async (args, ctx) => {
    const path = configPathOf(ctx.session, args);
    const read = readText(path);
    if ("errors" in read) return { result: { ok: false, path, errors: read.errors, warnings: [] } };
    const outline = spoolfileOutline(read.text, path);
    const errors = diagnosticViews(outline.diagnostics, "error");
    const ok = errors.length === 0;
    return { result: { ok, path, errors, warnings: diagnosticViews(outline.diagnostics, "warning"), ...(ok ? { ast: outline.entries } : {}) } };
  }),
  readTool(
    "config_validate",
    "Validate the Spoolfile as `spool config validate` does",
    object({ ...PATH, strict_secrets: bool("Treat unreadable secrets as errors") }),
    async (args, ctx) => {
      const path = configPathOf(ctx.session, args);
      const strict = args.strict_secrets === true;
      const loaded = loadSpoolfile(path, { env: process.env, strictSecrets: strict });
      const errors = diagnosticViews(loaded.diagnostics, "error");
      return { result: { ok: errors.length === 0, path, errors, warnings: diagnosticViews(loaded.diagnostics, "warning"), strict_secrets: strict } };
    },
  ),
  readTool("config_compile", "Compile the Spoolfile and summarise it (listeners, backend, route counts)", object({ ...PATH }), async (args, ctx) => {
    const path = configPathOf(ctx.session, args);
    const loaded = loadSpoolfile(path, { env: process.env });
    const errors = diagnosticViews(loaded.diagnostics, "error");
    const result: Record<string, unknown> = { ok: loaded.config !== null && errors.length === 0, path, errors, warnings: diagnosticViews(loaded.diagnostics, "warning") };
    if (loaded.config) result.summary = compileSummary(loaded.config);
    return { result };
  }),
  readTool("config_fmt_preview", "The Spoolfile as `spool config fmt` would write it (credentials redacted)", object({ ...PATH }), async (args, ctx) => {
    const path = configPathOf(ctx.session, args);
    const read = readText(path);
    if ("errors" in read) return { result: { ok: false, path, errors: read.errors } };
    const formatted = formatText(read.text, path);
    if (!formatted.ok) return { result: { ok: false, path, errors: diagnosticViews(formatted.diagnostics, "error") } };
    return { result: { ok: true, path, formatted: redactSpoolfileText(formatted.text, path), errors: [] } };
  }),
  readTool(
    "config_diff",
    "Unified diff from the formatted Spoolfile to `content` formatted (credentials redacted on both sides)",
    object({ content: str("The proposed Spoolfile text"), ...PATH, context: int("Context lines (default 3)", 0, 20) }, ["content"]),
    async (args, ctx) => {
      const path = configPathOf(ctx.session, args);
      const context = (args.context as number | undefined) ?? 3;
      const read = readText(path);
      if ("errors" in read) return { result: { ok: false, path, changed: false, context, unified_diff: "", errors: read.errors, warnings: [] } };
      const before = formatText(read.text, path);
      const after = formatText(args.content as string, path);
      const errors = [...(before.ok ? [] : diagnosticViews(before.diagnostics, "error")), ...(after.ok ? [] : diagnosticViews(after.diagnostics, "error"))];
      if (!before.ok || !after.ok) return { result: { ok: false, path, changed: false, context, unified_diff: "", errors, warnings: [] } };
      const compiled = compileSpoolfile(after.text, path, { env: process.env });
      const patch = unifiedDiff(redactSpoolfileText(before.text, path), redactSpoolfileText(after.text, path), path, `${path} (proposed)`, context);
      return {
        result: {
          ok: true,
          path,
          changed: before.text !== after.text,
          context,
          unified_diff: patch,
          errors: diagnosticViews(compiled.diagnostics, "error"),
          warnings: diagnosticViews(compiled.diagnostics, "warning"),
        },
      };
    },
  ),
];
