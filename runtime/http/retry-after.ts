// Reading a peer's Retry-After: push delivery (docs/delivery.md "Push") and the tracing exporter
// (docs/operations.md "Tracing") both wait as long as the answer asks.

/**
 * Parses a Retry-After header (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
 * Returns milliseconds from `nowMs` (0 for a date in the past), or undefined when absent or malformed.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only real HTTP-dates: Date.parse alone would also accept "1" or "2024" and yield nonsense.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const atMs = Date.parse(text);
  if (Number.isNaN(atMs)) return undefined;
  return Math.max(0, atMs - nowMs);
}
