// What ingress stores besides the body: the request headers (reference-behaviour.md §2 row 3:
// canonical names, repeated values joined with ",", minus the credential headers) and a small trace.
import type { IncomingMessage } from "node:http";

// DECISIONS.md "Ingress": stored headers exclude these; they would hand the sender's credentials to
// every consumer and push target.
const NEVER_STORED = new Set(["authorization", "proxy-authorization", "cookie"]);

export function captureHeaders(req: Pick<IncomingMessage, "rawHeaders">, extra?: Readonly<Record<string, string>>): Record<string, string> {
  const byLower = new Map<string, { name: string; value: string }>();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const lower = raw[i].toLowerCase();
    if (NEVER_STORED.has(lower)) continue;
    const existing = byLower.get(lower);
    if (existing) existing.value = `${existing.value},${raw[i + 1]}`;
    else byLower.set(lower, { name: canonicalHeaderName(lower), value: raw[i + 1] });
  }
  if (extra) {
    for (const [name, value] of Object.entries(extra)) {
      const lower = name.toLowerCase();
      if (NEVER_STORED.has(lower)) continue;
      byLower.set(lower, { name: canonicalHeaderName(lower), value });
    }
  }
  const headers: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const { name, value } of byLower.values()) headers[name] = value;
  return { ...headers };
}

/** "x-hub-signature-256" → "X-Hub-Signature-256" (the reference's canonical MIME form). */
export function canonicalHeaderName(lower: string): string {
  let out = "";
  let upperNext = true;
  for (const ch of lower) {
    out += upperNext ? ch.toUpperCase() : ch;
    upperNext = ch === "-";
  }
  return out;
}
