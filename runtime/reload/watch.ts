// Watching the config file for `--watch`, and SIGHUP for `--pid-file` (docs/decisions.md D55): the
// triggers of a hot reload; runtime/reload/reloader.ts runs it.
import { lstatSync, readlinkSync, statSync, watch, type FSWatcher } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";

export interface ConfigWatcher {
  close(): void;
}

/**
 * Watches the directories that hold the config file and every symlink on the way to it, not the
 * file: editors and `git pull` replace the file by renaming a new one over it, which a watch on the
 * old inode would never report; a Spoolfile that is a symlink changes where its target lives
 * (edited in place there), and a Kubernetes ConfigMap swaps a `..data` directory link beside it.
 * Only events for those names count, so logs written next to the file do not trigger reloads.
 * Bursts of events (write + rename + chmod) are folded into one call after `debounceMs`; after
 * each, the links are followed again, since a swap may point them somewhere new.
 */
export function watchConfigFile(path: string, onChange: () => void, options: { debounceMs?: number; onError?: (error: unknown) => void } = {}): ConfigWatcher {
  const absolute = resolve(path);
  const debounceMs = options.debounceMs ?? 100;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  /** By directory path, with the directory's identity: one removed and made again is watched afresh. */
  const watchers = new Map<string, { watcher: FSWatcher; identity: string }>();
  let names = new Map<string, Set<string>>();

  const fire = () => {
    if (closed) return;
    rewatch();
    onChange();
  };
  const rewatch = () => {
    names = watchPoints(absolute);
    for (const [dir, watched] of watchers) {
      if (names.has(dir) && identityOf(dir) === watched.identity) continue;
      watched.watcher.close();
      watchers.delete(dir);
    }
    for (const dir of names.keys()) {
      if (watchers.has(dir)) continue;
      try {
        const identity = identityOf(dir);
        const watcher = watch(dir, { persistent: false }, (_event, filename) => {
          if (filename !== null && !names.get(dir)?.has(filename.toString())) return;
          clearTimeout(timer);
          timer = setTimeout(fire, debounceMs);
        });
        watcher.on("error", (error) => options.onError?.(error));
        watchers.set(dir, { watcher, identity });
      } catch (error) {
        // Tried again after the next change seen elsewhere.
        options.onError?.(error);
      }
    }
  };
  rewatch();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const { watcher } of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}

/** Inode and birth time: file systems reuse a freed inode number for the next directory made. */
function identityOf(dir: string): string {
  try {
    const stats = statSync(dir);
    return `${stats.dev}:${stats.ino}:${stats.birthtimeMs}`;
  } catch {
    return "missing";
  }
}

/** At most this many symlinks are followed (a loop stops there). */
const MAX_LINK_HOPS = 32;

/**
 * The directory entries a change of `path`'s content can come through, by directory: the path's
 * own name, and for every symlink met while resolving it (the file itself or a directory on the
 * way), the link's name in its directory and then the same for where it points.
 */
export function watchPoints(path: string): Map<string, Set<string>> {
  const points = new Map<string, Set<string>>();
  const add = (entry: string) => {
    const dir = dirname(entry);
    let set = points.get(dir);
    if (!set) points.set(dir, (set = new Set()));
    set.add(basename(entry));
  };
  let current: string | undefined = resolve(path);
  for (let hops = 0; current !== undefined && hops < MAX_LINK_HOPS; hops++) {
    const parts = current.split(sep).filter((part) => part !== "");
    let next: string | undefined;
    // The first symlink on the way (a directory, or the file itself) is the entry to watch; the
    // path through it is followed in the next hop. Without one, the path itself is the entry.
    let entry = current;
    for (let i = 1; i <= parts.length; i++) {
      const prefix = sep + parts.slice(0, i).join(sep);
      let isLink: boolean;
      try {
        isLink = lstatSync(prefix).isSymbolicLink();
      } catch {
        break; // missing: nothing further to follow (the watch on its directory sees it appear)
      }
      if (!isLink) continue;
      entry = prefix;
      try {
        next = join(resolve(dirname(prefix), readlinkSync(prefix)), ...parts.slice(i));
      } catch {
        next = undefined;
      }
      break;
    }
    add(entry);
    current = next;
  }
  return points;
}

/** Calls `onHangup` on SIGHUP until the returned function is called. */
export function onSighup(onHangup: () => void): () => void {
  const handler = () => onHangup();
  process.on("SIGHUP", handler);
  return () => process.off("SIGHUP", handler);
}
