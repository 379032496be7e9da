// `spool run`: compile the Spoolfile, open the store, serve until SIGTERM/SIGINT
// (docs/cli.md "`spool run`"; docs/decisions.md D54, D55).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { loadSpoolfile, LOG_DIAGNOSTICS_HINT, logSafeDiagnostics, parseEncryptionKey, renderDiagnostic, SECRET_KEY_VARIABLE } from "../../compiler/index.js";
import { createApp, type AppDeps } from "../../runtime/app/app.js";
import { spoolExtensions } from "../../runtime/app/extensions.js";
import { isLogLevel } from "../../runtime/observability/log.js";
import { createReloader, type ConfigLoad } from "../../runtime/reload/reloader.js";
import { onSighup, watchConfigFile } from "../../runtime/reload/watch.js";
import { spoolVersion } from "../version.js";

export interface RunFlags {
  config: string;
  db: string;
  postgresDsn?: string;
  pidFile?: string;
  watch?: boolean;
  logLevel?: string;
  dotenv?: string;
}

/**
 * SIGTERM (docs/decisions.md D54): running deliveries and requests in
 * flight get up to 10 s, and the process exits within 15 s; the rest is margin for closing the store.
 */
const STOP_DEADLINE_MS = 10_000;
const HARD_EXIT_MS = 14_500;

/** The Admin API, delivery service and trend signals mounted on the app (runtime/app/extensions.ts); tests may replace them. */
export type RunExtensions = Pick<AppDeps, "admin" | "services" | "trendSignals">;

/** Runs the server; resolves with the process exit code once it has stopped. */
export async function runCommand(flags: RunFlags, extensionsOverride?: RunExtensions): Promise<number> {
  if (flags.logLevel !== undefined && !isLogLevel(flags.logLevel)) {
    process.stderr.write(`spool run: --log-level must be debug, info, warn, error or off, got ${JSON.stringify(flags.logLevel)}\n`);
    return 2;
  }
  if (flags.dotenv !== undefined) {
    try {
      applyDotenv(readFileSync(flags.dotenv, "utf8"));
    } catch (error) {
      process.stderr.write(`spool run: --dotenv ${flags.dotenv}: ${(error as Error).message}\n`);
      return 1;
    }
  }

  const configPath = resolve(flags.config);
  const load = (): ConfigLoad => loadRunConfig(configPath);
  const initial = load();
  if (!initial.config) {
    for (const line of initial.errors.length > 0 ? initial.errors : [`${configPath}: cannot read the config file`]) process.stderr.write(`${line}\n`);
    if (initial.errors.length > 0) process.stderr.write(`(${LOG_DIAGNOSTICS_HINT})\n`);
    return 1;
  }
  for (const line of initial.warnings) process.stderr.write(`${line}\n`);
  const config = initial.config;
  // Read once: runtime secret versions are sealed with this key for the life of the process. The
  // compiler refused a config with a runtime pool and no usable key (at start and on reload).
  const secretKey = parseEncryptionKey(process.env[SECRET_KEY_VARIABLE]);
  if (!secretKey.ok && process.env[SECRET_KEY_VARIABLE] !== undefined) {
    process.stderr.write(`spool run: warning: ${secretKey.problem}; runtime secrets cannot be used until it is fixed and Spool restarted\n`);
  }

  const dbPath = resolve(flags.db);
  const postgresDsn = flags.postgresDsn ?? process.env.SPOOL_POSTGRES_DSN;
  if (!storeReachable(config.backend, dbPath, postgresDsn)) return 1;

  const extensions = extensionsOverride ?? spoolExtensions({ configPath, compileOptions: { env: process.env, strictSecrets: true } });
  let app: ReturnType<typeof createApp>;
  try {
    app = createApp(config, {
      version: spoolVersion,
      configFingerprint: initial.fingerprint,
      // SPOOL_POSTGRES_SCHEMA lets several deployments (or test runs) share one database.
      storeLocation: { sqlitePath: dbPath, postgresDsn, postgresSchema: process.env.SPOOL_POSTGRES_SCHEMA || undefined },
      logLevel: flags.logLevel as AppDeps["logLevel"],
      secretKey: secretKey.ok ? secretKey.key : null,
      ...extensions,
    });
  } catch (error) {
    // The runtime log's file cannot be opened, for one.
    process.stderr.write(`spool run: cannot start: ${(error as Error).message}\n`);
    return 1;
  }
  const logger = () => app.logger;
  const reloader = createReloader({ load, apply: (next, fingerprint) => app.reload(next, fingerprint), logger: app.logger, servingFingerprint: () => app.configFingerprint() });
  const triggerReload = (trigger: string, force = false) =>
    void reloader.reload(trigger, force).catch((error: unknown) => logger().error("config_reload_failed", { trigger, error }));

  // The watcher is ready before /healthz first answers (docs/decisions.md D55).
  const watcher = flags.watch ? watchConfigFile(configPath, () => triggerReload("watch"), { onError: (error) => logger().warn("config_watch_failed", { error }) }) : undefined;
  const stopSighup = flags.pidFile ? onSighup(() => triggerReload("sighup", true)) : undefined;
  const stopReloads = () => {
    watcher?.close();
    stopSighup?.();
  };

  const stopped = stopSignal(flags.pidFile !== undefined);

  try {
    await app.start();
  } catch (error) {
    stopReloads();
    process.stderr.write(`spool run: cannot start: ${(error as Error).message}\n`);
    return 1;
  }
  // The pid file appears once the service answers (docs/decisions.md D54). One that cannot be written
  // is a startup error: a supervisor that signals by it could not stop or reload this process.
  if (flags.pidFile) {
    try {
      writeFileSync(flags.pidFile, `${process.pid}\n`);
    } catch (error) {
      process.stderr.write(`spool run: cannot write the pid file ${flags.pidFile}: ${(error as Error).message}\n`);
      stopReloads();
      await app.stop(STOP_DEADLINE_MS);
      return 1;
    }
  }

  const signal = await stopped;
  logger().info("spool_stopping", { signal });
  const hardExit = setTimeout(() => {
    process.stderr.write("spool run: shutdown did not finish in time; exiting\n");
    process.exit(1);
  }, HARD_EXIT_MS);
  hardExit.unref();
  stopReloads();
  await app.stop(STOP_DEADLINE_MS);
  if (flags.pidFile) rmSync(flags.pidFile, { force: true });
  clearTimeout(hardExit);
  return signal === "SIGHUP" ? 129 : 0;
}

/** Reads and compiles the Spoolfile as `spool run` does at start and on each reload. */
function loadRunConfig(configPath: string): ConfigLoad {
  const result = loadSpoolfile(configPath, { env: process.env, strictSecrets: true });
  // What `spool run` says of its config goes to logs: no value of the file in it (README). A file
  // that could not be read or decoded has no values to show, and its message says why whole.
  const diagnostics = result.text === null ? result.diagnostics : logSafeDiagnostics(result.diagnostics);
  return {
    fingerprint: result.fingerprint,
    config: result.config,
    errors: diagnostics.filter((d) => d.severity === "error").map(renderDiagnostic),
    warnings: diagnostics.filter((d) => d.severity === "warning").map(renderDiagnostic),
  };
}

/** The store's place exists (SQLite: the directory of --db) or is named (PostgreSQL: a DSN); false after saying why not. */
function storeReachable(backend: string, dbPath: string, postgresDsn: string | undefined): boolean {
  if (backend === "sqlite") {
    try {
      mkdirSync(dirname(dbPath), { recursive: true });
    } catch (error) {
      process.stderr.write(`spool run: cannot create the directory of --db ${dbPath}: ${(error as Error).message}\n`);
      return false;
    }
  }
  if (backend === "postgres" && !postgresDsn) {
    process.stderr.write("spool run: queue backend postgres needs --postgres-dsn or SPOOL_POSTGRES_DSN\n");
    return false;
  }
  return true;
}

/** Resolves with the name of the first stop signal. */
function stopSignal(reloadsOnHangup: boolean): Promise<string> {
  let stopRequested: (signal: string) => void = () => {};
  const stopped = new Promise<string>((resolveStop) => (stopRequested = resolveStop));
  const onSignal = (signal: NodeJS.Signals) => stopRequested(signal);
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  // Without --pid-file SIGHUP does not reload; it still must not kill the process outright (Node's
  // default), so a hangup stops the service as gracefully as SIGTERM, and further hangups during the
  // drain are ignored. The exit status is then 129 (128 + SIGHUP), as for a process the signal ended,
  // so a supervisor that restarts on failure (systemd Restart=on-failure) still brings it back.
  if (!reloadsOnHangup) process.on("SIGHUP", onSignal);
  return stopped;
}

/** `KEY=value` lines; `#` comments, blank lines and an `export ` prefix are allowed. Variables already set win. */
export function parseDotenv(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const [index, rawLine] of text.split(/\r?\n/).entries()) {
    const line = rawLine.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    // By number only: the line is likely a secret with its `=` lost, and this goes to stderr.
    if (!match) throw new Error(`line ${index + 1} is not a KEY=value line`);
    let value = match[2];
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.length >= 2 && value.endsWith(quote)) {
      value = value.slice(1, -1);
      if (quote === '"') value = value.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
    }
    values.set(match[1], value);
  }
  return values;
}

function applyDotenv(text: string): void {
  for (const [name, value] of parseDotenv(text)) {
    if (process.env[name] === undefined) process.env[name] = value;
  }
}
