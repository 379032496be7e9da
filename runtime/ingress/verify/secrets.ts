import type { RotatingSecret } from "./types.js";

/** The secrets valid at `atMs`: valid_from inclusive, valid_until exclusive (reference-behaviour.md §1.3 `secrets`). */
export function secretsValidAt(secrets: readonly RotatingSecret[], atMs: number): Buffer[] {
  const valid: Buffer[] = [];
  for (const secret of secrets) {
    if (secret.validFromMs !== undefined && atMs < secret.validFromMs) continue;
    if (secret.validUntilMs !== undefined && atMs >= secret.validUntilMs) continue;
    const bytes = typeof secret.value === "string" ? Buffer.from(secret.value, "utf8") : secret.value;
    if (bytes.length > 0) valid.push(bytes);
  }
  return valid;
}
