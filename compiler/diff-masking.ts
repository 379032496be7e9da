import { redactPlaceholderDefaults, redactUrlQueryValues } from "./url-redact.js";
import type { SpoolConfig } from "./ir.js";
import { diffConfigs, type ConfigChange } from "./semantic-diff.js";

// What `config diff --semantic` prints is masked as a whole: a placeholder's value may reach any
// printed text (a target's name, an argument), and so may a URL's query.

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
    return redactUrlQueryValues(redactPlaceholderDefaults(masked));
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
