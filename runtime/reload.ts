// Hot reload (`--watch`, SIGHUP with --pid-file): compile the new file fully first; an invalid file
// keeps the old config serving and is logged; a valid one is handed to the app, which applies it
// atomically or refuses it when it needs a restart (clarifications.md 19–20, reference §2 row 38).
import { watch, type FSWatcher } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import type { SpoolConfig } from "../compiler/ir.js";
import type { ReloadOutcome } from "./app.js";
import type { RuntimeLogger } from "./observability/log.js";

export interface ConfigLoad {
  /** The file's text, or null when it could not be read. */
  text: string | null;
  /** null when any error was found. */
  config: SpoolConfig | null;
  /** Rendered diagnostics ("file:line:col: message"). */
  errors: readonly string[];
  warnings: readonly string[];
}

export interface ReloaderDeps {
  /** Reads and compiles the config file. */
  load(): ConfigLoad;
  apply(config: SpoolConfig): ReloadOutcome;
  logger: RuntimeLogger;
  /** The text the running config was compiled from: an unchanged file is not reloaded on a watch event. */
  initialText: string | null;
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
  let appliedText = deps.initialText;
  let running: Promise<ReloadResult> | undefined;
  let again: Promise<ReloadResult> | undefined;
  let againForced = false;

  const runOnce = (trigger: string, force: boolean): ReloadResult => {
    const loaded = deps.load();
    if (!force && loaded.text !== null && loaded.text === appliedText) return { kind: "unchanged" };
    if (!loaded.config) {
      deps.logger.error("config_reload_failed", { trigger, errors: loaded.errors, detail: "the previous config keeps serving" });
      return { kind: "invalid", errors: loaded.errors };
    }
    for (const warning of loaded.warnings) deps.logger.warn("config_warning", { warning });
    const outcome = deps.apply(loaded.config);
    if (!outcome.applied) return { kind: "restart_required", changes: outcome.changes };
    appliedText = loaded.text;
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

export interface ConfigWatcher {
  close(): void;
}

/**
 * Watches the config file's directory, not the file: editors and `git pull` replace the file by
 * renaming a new one over it, which a watch on the old inode would never report. Bursts of events
 * (write + rename + chmod) are folded into one call after `debounceMs`.
 */
export function watchConfigFile(path: string, onChange: () => void, options: { debounceMs?: number; onError?: (error: unknown) => void } = {}): ConfigWatcher {
  const absolute = resolve(path);
  const name = basename(absolute);
  const debounceMs = options.debounceMs ?? 100;
  let timer: NodeJS.Timeout | undefined;
  const watcher: FSWatcher = watch(dirname(absolute), { persistent: false }, (_event, filename) => {
    if (filename !== null && filename !== name) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  });
  watcher.on("error", (error) => options.onError?.(error));
  return {
    close() {
      clearTimeout(timer);
      watcher.close();
    },
  };
}

/** Calls `onHangup` on SIGHUP until the returned function is called. */
export function onSighup(onHangup: () => void): () => void {
  const handler = () => onHangup();
  process.on("SIGHUP", handler);
  return () => process.off("SIGHUP", handler);
}
