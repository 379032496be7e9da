// Hot reload (`--watch`, SIGHUP with --pid-file): compile the new file fully first; an invalid file
// keeps the old config serving and is logged; a valid one is handed to the app, which applies it
// atomically or refuses it when it needs a restart (docs/decisions.md D55).
import { LOG_DIAGNOSTICS_HINT } from "../../compiler/index.js";
import type { SpoolConfig } from "../../compiler/ir.js";
import type { ReloadOutcome } from "./apply.js";
import type { RuntimeLogger } from "../observability/log.js";

export interface ConfigLoad {
  /** sha256 of the file's bytes (compiler configFingerprint), or null when it could not be read. */
  fingerprint: string | null;
  /** null when any error was found. */
  config: SpoolConfig | null;
  /** Rendered diagnostics ("file:line:col: message"). */
  errors: readonly string[];
  warnings: readonly string[];
}

export interface ReloaderDeps {
  /** Reads and compiles the config file. */
  load(): ConfigLoad;
  apply(config: SpoolConfig, fingerprint: string | null): ReloadOutcome;
  logger: RuntimeLogger;
  /**
   * The fingerprint of the file the serving config came from (the app's, which management rewrites
   * update too): a watch event on a file with the same bytes reloads nothing.
   */
  servingFingerprint(): string | null;
}

export type ReloadResult =
  | { kind: "unchanged" }
  | { kind: "invalid"; errors: readonly string[] }
  | { kind: "restart_required"; changes: string[] }
  | { kind: "applied"; generation: number };

export interface Reloader {
  /**
   * Reloads now; concurrent calls share one run and a call during a run schedules one more.
   * `force` (SIGHUP) compiles and applies even an unchanged file: the operator asked, and the
   * secrets it reads from `file:` sources may have been rotated without an edit.
   */
  reload(trigger: string, force?: boolean): Promise<ReloadResult>;
}

export function createReloader(deps: ReloaderDeps): Reloader {
  let running: Promise<ReloadResult> | undefined;
  let again: Promise<ReloadResult> | undefined;
  let againForced = false;

  const runOnce = (trigger: string, force: boolean): ReloadResult => {
    const loaded = deps.load();
    if (!force && loaded.fingerprint !== null && loaded.fingerprint === deps.servingFingerprint()) return { kind: "unchanged" };
    if (!loaded.config) {
      deps.logger.error("config_reload_failed", { trigger, errors: loaded.errors, detail: `the previous config keeps serving (${LOG_DIAGNOSTICS_HINT})` });
      return { kind: "invalid", errors: loaded.errors };
    }
    for (const warning of loaded.warnings) deps.logger.warn("config_warning", { warning });
    const outcome = deps.apply(loaded.config, loaded.fingerprint);
    if (!outcome.applied) return { kind: "restart_required", changes: outcome.changes };
    deps.logger.info("config_reload_applied", { trigger, generation: outcome.generation });
    return { kind: "applied", generation: outcome.generation };
  };

  return {
    reload(trigger, force = false) {
      if (running) {
        // One more run after the current one sees the latest write; further calls share it (forced
        // if any of them was).
        againForced ||= force;
        again ??= running.then(() => {
          const forced = againForced;
          again = undefined;
          againForced = false;
          return this.reload(trigger, forced);
        });
        return again;
      }
      running = Promise.resolve().then(() => runOnce(trigger, force));
      return running.finally(() => (running = undefined));
    },
  };
}
