// Secret values as the credential checks use them: rotation windows, resolved token lists.
import type { SecretSource } from "../../compiler/ir.js";
import type { ResolvedSecret } from "./types.js";

/** The secrets valid at `atMs`: valid_from inclusive, valid_until exclusive, so rotations never overlap by surprise. */
export function secretsValidAt(secrets: readonly ResolvedSecret[], atMs: number): Buffer[] {
  const valid: Buffer[] = [];
  for (const secret of secrets) {
    if (secret.validFromMs !== undefined && atMs < secret.validFromMs) continue;
    if (secret.validUntilMs !== undefined && atMs >= secret.validUntilMs) continue;
    const bytes = typeof secret.value === "string" ? Buffer.from(secret.value, "utf8") : secret.value;
    if (bytes.length > 0) valid.push(bytes);
  }
  return valid;
}

/** The resolved values of a token list; unresolved sources are left out. */
export function secretValues(sources: readonly SecretSource[]): string[] {
  const values: string[] = [];
  for (const source of sources) if (source.value !== null && source.value !== "") values.push(source.value);
  return values;
}
