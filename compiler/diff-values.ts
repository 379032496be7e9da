// How `config diff --semantic` prints a value: as the Spoolfile writes it (`5s`, `2mb`, `on`), and
// never a credential. Secret values, basic-auth passwords, header/query/env values, vars values and
// a URL's password, exec arguments are compared but print as `(redacted)`; a secret source prints by its name.
import { redactUrlPasswords, URL_REDACTED as REDACTED } from "./url-redact.js";
import type { ValueKind } from "./diff-names.js";

const NOT_SET = "(not set)";

/** A value as printed, in Spoolfile syntax. */
export function formatValue(kind: ValueKind, value: unknown): string {
  if (value === null || value === undefined) return kind === "duration" ? "off" : NOT_SET;
  switch (kind) {
    case "duration":
      return formatDuration(value as number);
    case "size":
      return formatSize(value as number);
    case "bool":
      return value ? "on" : "off";
    case "number":
    case "word":
      return String(value);
    case "text":
      return quote(value as string);
    case "listen":
      return (value as { address: string }).address;
    case "words":
      return listOf(value, (item) => redactUrlPasswords(String(item)));
    case "strings":
      return listOf(value, (item) => quote(String(item)));
    case "output":
      return formatOutput(value as { kind: string; path?: string });
    case "secret":
      return formatSecret(value as SecretLike);
    case "user":
      return `${quote((value as { username: string }).username)} ${REDACTED}`;
    case "timestamp":
      return quote(new Date(value as number).toISOString());
    case "named":
      return listOf(value, (entry) => `${quote(pairName(entry))} ${REDACTED}`);
    case "hidden":
      return REDACTED;
  }
}

/** Two values of a kind that compare equal; secrets compare by kind, reference and resolved value. */
export function sameValue(kind: ValueKind, a: unknown, b: unknown): boolean {
  if (kind === "secret" && isSecretLike(a) && isSecretLike(b)) return a.kind === b.kind && a.ref === b.ref && a.value === b.value;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * A change's two sides. A secret says how it changed without showing it; a value that prints the
 * same on both sides (only what is redacted differs) ends in `(changed)`.
 */
export function changedValues(kind: ValueKind, a: unknown, b: unknown): { before: string; after: string } {
  if (kind === "hidden") return { before: REDACTED, after: `${REDACTED.slice(0, -1)}, changed)` };
  if (kind === "secret" && isSecretLike(a) && isSecretLike(b)) {
    if (a.kind === "raw" && b.kind === "raw") return { before: "raw:(secret)", after: "raw:(secret changed)" };
    if (a.kind === b.kind && a.ref === b.ref) return { before: "(secret)", after: "(secret changed)" };
  }
  const before = formatValue(kind, a);
  const after = formatValue(kind, b);
  return { before, after: before === after ? `${after} (changed)` : after };
}

/** `1d2h`, `1m30s`, `250ms`, `0`: the largest units first, as the duration grammar reads them. */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0";
  const units: [string, number][] = [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1_000], ["ms", 1]];
  let rest = ms;
  let out = "";
  for (const [unit, size] of units) {
    const count = Math.floor(rest / size);
    if (count > 0) out += `${count}${unit}`;
    rest -= count * size;
  }
  return out;
}

/** `2mb`, `64kb`, `1gb`, `1500`: the largest unit (powers of 1024) that divides it, as README writes sizes. */
export function formatSize(bytes: number): string {
  for (const [unit, size] of [["gb", 1024 ** 3], ["mb", 1024 ** 2], ["kb", 1024]] as const) {
    if (bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return String(bytes);
}

function quote(text: string): string {
  return JSON.stringify(redactUrlPasswords(text));
}

function listOf(value: unknown, item: (entry: unknown) => string): string {
  const list = value as readonly unknown[];
  return list.length === 0 ? "(none)" : list.map(item).join(", ");
}

function pairName(entry: unknown): string {
  return Array.isArray(entry) ? String(entry[0]) : String((entry as { name: string }).name);
}

function formatOutput(output: { kind: string; path?: string }): string {
  return output.kind === "file" ? `file ${quote(output.path ?? "")}` : output.kind;
}

interface SecretLike {
  readonly kind: string;
  readonly ref: string;
  readonly value: string | null;
}

function isSecretLike(v: unknown): v is SecretLike {
  return typeof v === "object" && v !== null && "kind" in v && "ref" in v;
}

/** `env:NAME`, `file:PATH`, `raw:(redacted)`: where a secret comes from, never the secret (only a name or path is shown). */
function formatSecret(source: SecretLike): string {
  return `${source.kind}:${source.kind === "env" || source.kind === "file" ? source.ref : REDACTED}`;
}
