// Durations in request bodies (`lease_ttl`, `max_wait`, `delay`) arrive as text from clients, so the
// runtime parses these; config durations come from the compiler already in ms.

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

/**
 * "250ms", "30s", "5m", "1h30m", "7d" (and "0") → milliseconds, or undefined when the text is not a
 * duration. Negative values are not durations.
 */
export function parseDurationMs(text: string): number | undefined {
  if (text === "0") return 0;
  if (text.length === 0 || text.length > 64) return undefined;
  let totalMs = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const at = PART.lastIndex;
    const match = PART.exec(text);
    if (!match || match.index !== at) return undefined;
    totalMs += Number(match[1]) * UNIT_MS[match[2]];
  }
  const rounded = Math.round(totalMs);
  return Number.isSafeInteger(rounded) ? rounded : undefined;
}
