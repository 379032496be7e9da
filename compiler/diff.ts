import { createTwoFilesPatch, formatPatch, type StructuredPatch } from "diff";
import type { DeliverTarget, Route, SpoolConfig } from "./ir.js";
import { redactUrlPasswords, redactUrlQueryValues } from "./url-redact.js";

/**
 * Past this many changed lines a line-by-line diff stops looking for the smallest one: its cost
 * grows with the edit distance times the length (20,000 different routes took minutes), and a
 * change that large reads no better hunk by hunk.
 */
const MAX_DIFF_EDIT_LINES = 2_000;

/** Unified diff of two (already formatted) texts; empty when they are equal. */
export function unifiedDiff(oldText: string, newText: string, oldName: string, newName: string): string {
  if (oldText === newText) return "";
  return createTwoFilesPatch(oldName, newName, oldText, newText, "", "", { context: 3, maxEditLength: MAX_DIFF_EDIT_LINES }) ?? wholeFilePatch(oldText, newText, oldName, newName);
}

/** One hunk replacing every old line with every new one: still a patch `patch` applies. */
function wholeFilePatch(oldText: string, newText: string, oldName: string, newName: string): string {
  const linesOf = (text: string, sign: string): string[] => {
    if (text === "") return [];
    const lines = text.replace(/\n$/, "").split("\n").map((line) => sign + line);
    return text.endsWith("\n") ? lines : [...lines, "\\ No newline at end of file"];
  };
  const removed = linesOf(oldText, "-");
  const added = linesOf(newText, "+");
  const count = (lines: string[]) => lines.filter((line) => !line.startsWith("\\")).length;
  const [oldLines, newLines] = [count(removed), count(added)];
  const patch: StructuredPatch = {
    oldFileName: oldName,
    newFileName: newName,
    oldHeader: "",
    newHeader: "",
    hunks: [{ oldStart: oldLines === 0 ? 0 : 1, oldLines, newStart: newLines === 0 ? 0 : 1, newLines, lines: [...removed, ...added] }],
  };
  return formatPatch(patch);
}

export interface ConfigChange {
  readonly kind: "added" | "removed" | "changed";
  /** `route /hooks/github`, `pull_api.maxBatch`, `route /x: mode.targets[https://a].timeoutMs`. */
  readonly path: string;
  readonly before?: string;
  readonly after?: string;
}

/**
 * IR-level changes between two configs: routes by path, targets by name, everything else by field.
 * `shownName` is how a target's name will be printed (expansionMasker): two targets that print the
 * same are the same target when their order is compared, as they are one `~` line (semanticChanges).
 */
export function diffConfigs(before: SpoolConfig, after: SpoolConfig, shownName: (name: string) => string = (name) => name): ConfigChange[] {
  const changes: ConfigChange[] = [];
  const { routes: oldRoutes, ...oldRest } = before;
  const { routes: newRoutes, ...newRest } = after;
  diffValues(oldRest, newRest, "", changes);
  const oldByPath = new Map(oldRoutes.map((r) => [r.path, r]));
  const newByPath = new Map(newRoutes.map((r) => [r.path, r]));
  for (const r of oldRoutes) if (!newByPath.has(r.path)) changes.push({ kind: "removed", path: `route ${r.path}` });
  // First match wins: the order of routes decides where a request goes.
  diffOrder(oldRoutes.map((r) => r.path), newRoutes.map((r) => r.path), "route order", changes);
  for (const r of newRoutes) {
    const old = oldByPath.get(r.path);
    if (!old) changes.push({ kind: "added", path: `route ${r.path}` });
    else {
      // Fan-out copies are stored, and their ids answered, in target order.
      if (old.mode.kind === "deliver" && r.mode.kind === "deliver") {
        diffOrder(old.mode.targets.map((t) => t.target), r.mode.targets.map((t) => t.target), `route ${r.path}: target order`, changes, shownName);
      }
      diffValues(keyedRoute(old), keyedRoute(r), `route ${r.path}: `, changes);
    }
  }
  return changes;
}

/**
 * A change when the names present in both lists come in a different order (additions and removals
 * are reported on their own). Names are matched as `shownName` prints them, and printed as they are.
 */
function diffOrder(before: readonly string[], after: readonly string[], path: string, out: ConfigChange[], shownName: (name: string) => string = (name) => name): void {
  const kept = (names: readonly string[], other: readonly string[]) => {
    const shownOther = new Set(other.map(shownName));
    return names.filter((name) => shownOther.has(shownName(name)));
  };
  const oldOrder = kept(before, after);
  const newOrder = kept(after, before);
  if (oldOrder.some((name, i) => shownName(name) !== shownName(newOrder[i]))) out.push({ kind: "changed", path, before: JSON.stringify(oldOrder), after: JSON.stringify(newOrder) });
}

/** Targets keyed by their name, so reordering or editing one target reads as such. */
function keyedRoute(route: Route): unknown {
  if (route.mode.kind !== "deliver") return route;
  const targets: Record<string, DeliverTarget> = {};
  for (const t of route.mode.targets) targets[t.target] = t;
  return { ...route, mode: { ...route.mode, targets } };
}

/**
 * Values that may hold a credential although they are not secret sources: outbound and tracing
 * header values (`header "Authorization" "Bearer {env.TOKEN}"`), match header and query values,
 * an exec target's `env` values (`env API_KEY "sk_live_…"`), basic-auth passwords and a URL's
 * password (a tracing collector's `user:pass@`). They are compared but never printed, their names
 * are. `vars` values, which those may come through, are diffed by name only (diffValues).
 */
const NAMED_VALUES = new Set(["headers", "query", "env"]);

function sensitive(key: string, value: unknown): unknown {
  if (key === "password" && typeof value === "string") return "(redacted)";
  if (typeof value === "string") return redactUrlPasswords(value);
  if (NAMED_VALUES.has(key) && Array.isArray(value)) {
    return value.map((entry: unknown) =>
      Array.isArray(entry) ? [entry[0], "(redacted)"] : isRecord(entry) && "value" in entry ? { ...entry, value: "(redacted)" } : entry,
    );
  }
  return value;
}

function diffValues(a: unknown, b: unknown, path: string, out: ConfigChange[], key = ""): void {
  if (key === "vars" && isRecord(a) && isRecord(b)) {
    // Each var by name, its value never shown.
    for (const name of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(name in a)) out.push({ kind: "added", path: `vars.${name}`, after: "(redacted)" });
      else if (!(name in b)) out.push({ kind: "removed", path: `vars.${name}` });
      else if (a[name] !== b[name]) out.push({ kind: "changed", path: `vars.${name}`, before: "(redacted)", after: "(redacted, changed)" });
    }
    return;
  }
  if (sensitive(key, a) !== a || sensitive(key, b) !== b) {
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ kind: "changed", path: trim(path), before: show(sensitive(key, a)), after: `${show(sensitive(key, b))} (changed)` });
    return;
  }
  if (isRecord(a) && isRecord(b) && Array.isArray(a) === Array.isArray(b)) {
    // A secret's resolved value is never printed.
    if (isSecretSource(a) && isSecretSource(b)) {
      if (a.kind === "raw" && b.kind === "raw") {
        if (a.ref !== b.ref) out.push({ kind: "changed", path: trim(path), before: "raw:(secret)", after: "raw:(secret changed)" });
      } else if (a.kind !== b.kind || a.ref !== b.ref) out.push({ kind: "changed", path: trim(path), before: `${a.kind}:${redactRef(a)}`, after: `${b.kind}:${redactRef(b)}` });
      else if (a.value !== b.value) out.push({ kind: "changed", path: trim(path), before: "(secret)", after: "(secret changed)" });
      return;
    }
    const left: Record<string, unknown> = a;
    const right: Record<string, unknown> = b;
    const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
    for (const key of keys) {
      const sub = path === "" || path.endsWith(": ") ? `${path}${key}` : Array.isArray(a) || key.includes("/") || key.includes(":") ? `${path}[${key}]` : `${path}.${key}`;
      if (!(key in left)) out.push({ kind: "added", path: sub, after: show(sensitive(key, right[key])) });
      else if (!(key in right)) out.push({ kind: "removed", path: sub, before: show(sensitive(key, left[key])) });
      else diffValues(left[key], right[key], sub, out, key);
    }
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ kind: "changed", path: trim(path), before: show(a), after: show(b) });
}

function trim(path: string): string {
  return path.endsWith(": ") ? path.slice(0, -2) : path;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

function isSecretSource(v: Record<string, unknown>): v is { kind: string; ref: string; value: string | null } {
  return (v.kind === "env" || v.kind === "file" || v.kind === "raw") && "ref" in v && "value" in v;
}

function redactRef(s: { kind: string; ref: string }): string {
  return s.kind === "raw" ? "(redacted)" : s.ref;
}

function show(v: unknown): string {
  return JSON.stringify(v, (key, value) => (isRecord(value) && isSecretSource(value) ? `${value.kind}:${redactRef(value)}` : sensitive(key, value)));
}

export function renderChanges(changes: readonly ConfigChange[]): string {
  return changes
    .map((c) =>
      c.kind === "added"
        ? `+ ${c.path}${c.after !== undefined ? ` = ${c.after}` : ""}`
        : c.kind === "removed"
          ? `- ${c.path}${c.before !== undefined ? ` (was ${c.before})` : ""}`
          : c.before === undefined && c.after === undefined
            ? `~ ${c.path} (changed where it is not shown)`
            : `~ ${c.path}: ${c.before} -> ${c.after}`,
    )
    .join("\n");
}

/** Expanded values shorter than this are left as they are: no credential is that short, and masking "80" would mask every 80. */
const MIN_MASKED_CHARS = 4;

/**
 * Puts the placeholder back where its value appears in the changes: a var or environment value can
 * reach a deliver URL (the name a target is diffed by) or an exec argument, and would otherwise be
 * printed through it (`…?token={vars.TOKEN}`). Longer values first, so a value holding another is
 * masked whole; each also as it reads inside JSON text. A change that then reads the same on both
 * sides says so (the values behind the placeholder differ).
 */
function maskExpansions(changes: readonly ConfigChange[], masker: (text: string) => string): ConfigChange[] {
  const mask = (text: string | undefined): string | undefined => (text === undefined ? undefined : masker(text));
  const masked = changes.map((change): ConfigChange => {
    const before = mask(change.before);
    const after = mask(change.after);
    return { kind: change.kind, path: mask(change.path)!, before, after: change.kind === "changed" && change.before !== change.after ? markedIfSame(before, after) : after };
  });
  return pairRenamed(masked);
}

/** What `config diff --semantic` prints for two compiled files: their IR changes, as masked for output. */
export function semanticChanges(
  before: { readonly config: SpoolConfig; readonly expansions?: ReadonlyMap<string, string> },
  after: { readonly config: SpoolConfig; readonly expansions?: ReadonlyMap<string, string> },
): ConfigChange[] {
  // One masker names the targets whose order is compared and masks every printed text.
  const masker = expansionMasker(before.expansions, after.expansions);
  return maskExpansions(diffConfigs(before.config, after.config, masker), masker);
}

/** A text as maskExpansions prints it: placeholders back in place of their values, URL query values redacted. */
function expansionMasker(...expansions: (ReadonlyMap<string, string> | undefined)[]): (text: string) => string {
  const pairs = new Map<string, string>();
  for (const map of expansions) for (const [value, placeholder] of map ?? []) if (value.length >= MIN_MASKED_CHARS && !pairs.has(value)) pairs.set(value, placeholder);
  const ordered = [...pairs].sort((a, b) => b[0].length - a[0].length);
  return (text) => {
    let masked = text;
    for (const [value, placeholder] of ordered) {
      masked = masked.split(value).join(placeholder);
      const escaped = JSON.stringify(value).slice(1, -1);
      if (escaped !== value) masked = masked.split(escaped).join(placeholder);
    }
    return redactUrlQueryValues(masked);
  };
}

/**
 * A removal and an addition under the same path once masked are one thing whose name came through
 * a placeholder whose value changed (a deliver URL built from `{vars.HOST}`): they are shown as
 * one change, not as a `-` and a `+` line that read the same.
 */
function pairRenamed(changes: readonly ConfigChange[]): ConfigChange[] {
  const added = new Map<string, ConfigChange>();
  for (const change of changes) if (change.kind === "added") added.set(change.path, change);
  const paired = new Set<ConfigChange>();
  const out: ConfigChange[] = [];
  for (const change of changes) {
    if (paired.has(change)) continue;
    const addition = change.kind === "removed" ? added.get(change.path) : undefined;
    if (!addition || paired.has(addition)) {
      out.push(change);
      continue;
    }
    paired.add(addition);
    // The same on both sides once masked: only what is not shown changed, so neither side is printed.
    if (change.before === addition.after) out.push({ kind: "changed", path: change.path });
    else out.push({ kind: "changed", path: change.path, before: change.before, after: addition.after });
  }
  return out;
}

/** A change whose two sides read the same once masked says so: the values behind the placeholder differ. */
function markedIfSame(before: string | undefined, after: string | undefined): string | undefined {
  return before === after ? `${after} (changed)` : after;
}
