// What ingress stores besides the body: the request headers (docs/decisions.md D11:
// canonical names, repeated values joined with ",", minus the credential headers) and a small trace.
import type { IncomingMessage } from "node:http";
import { isCredentialHeader } from "../http/credential-headers.js";

// Stored names by the name as sent. Senders repeat a few spellings, so the lower-casing and
// canonicalising are done once per spelling; bounded, so invented names cannot grow it without end.
const STORED_NAME_CACHE_LIMIT = 1024;
const storedNames = new Map<string, string | null>();

/** The canonical name a sent header is stored under, or null for a credential header. */
function storedName(sent: string): string | null {
  let name = storedNames.get(sent);
  if (name === undefined) {
    name = isCredentialHeader(sent) ? null : canonicalHeaderName(sent.toLowerCase());
    if (storedNames.size < STORED_NAME_CACHE_LIMIT) storedNames.set(sent, name);
  }
  return name;
}

/**
 * The headers stored with a message. `extra` (forward auth's copied headers) is added last;
 * `reserved` (canonical names) are headers only `extra` may bring: forward auth's `copy_headers`,
 * which a consumer reads as the auth service's word (X-User-Id), so a sender's own copy is dropped
 * even when the auth service answered without one.
 */
export function captureHeaders(
  req: Pick<IncomingMessage, "rawHeaders">,
  extra?: Readonly<Record<string, string>>,
  reserved?: ReadonlySet<string> | null,
): Record<string, string> {
  // Keyed by canonical name, which is one-to-one with the lower-cased name.
  const headers: Record<string, string> = {};
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = storedName(raw[i]);
    if (name === null || reserved?.has(name)) continue;
    const existing = Object.hasOwn(headers, name) ? headers[name] : undefined;
    setOwn(headers, name, existing === undefined ? raw[i + 1] : `${existing},${raw[i + 1]}`);
  }
  if (extra) {
    for (const [sent, value] of Object.entries(extra)) {
      const name = storedName(sent);
      if (name !== null) setOwn(headers, name, value);
    }
  }
  return headers;
}

// A header called "__proto__" is plain data, not the object's prototype.
function setOwn(headers: Record<string, string>, name: string, value: string): void {
  if (name === "__proto__") Object.defineProperty(headers, name, { value, enumerable: true, writable: true, configurable: true });
  else headers[name] = value;
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
