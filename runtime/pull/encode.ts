// The dequeue reply's JSON, written out by hand: `{"items":[...]}` with each item's fields in the
// order of DequeuedItem (ops.ts). A batch of 32 one-kilobyte messages is ~45 KB of JSON per reply,
// and JSON.stringify over 32 freshly built item objects (plus two Date→ISO conversions per item)
// cost about twice this. The bytes are exactly JSON.stringify({ items: leased.map(toItem) }) (a
// test compares the two): strings that may need escaping go through JSON.stringify, while base64
// text, ISO-8601 timestamps and integers never contain a character JSON escapes. A leased message a
// store read as base64 and stored JSON text (runtime/store/stored-lease.ts) is written as it is:
// the same item, its headers in the order they were stored.
import type { LeasedMessage } from "../store/records.js";

export const EMPTY_DEQUEUE_REPLY = '{"items":[]}';

export function encodeDequeueReply(leased: readonly LeasedMessage[]): string {
  if (leased.length === 0) return EMPTY_DEQUEUE_REPLY;
  let out = '{"items":[';
  encodeItems(leased, (json, i) => (out += i === 0 ? json : "," + json));
  return out + "]}";
}

/**
 * Each leased message as one-line item JSON (exactly JSON.stringify(toItem(m)), but for headers and
 * trace given as stored text, written as stored), handed to `each` in order: the dequeue reply joins
 * them, an SSE stream writes one event each.
 */
export function encodeItems(leased: readonly LeasedMessage[], each: (json: string, index: number, message: LeasedMessage) => void): void {
  const receivedAt = lastIso();
  const leaseUntil = lastIso();
  // A batch is nearly always of one route and target: each is escaped once, not once per item.
  const route = lastJson();
  const target = lastJson();
  for (let i = 0; i < leased.length; i++) {
    const m = leased[i];
    const payload = m.payloadB64 ?? base64(m.payload);
    const trace = m.traceJson !== undefined ? m.traceJson : m.trace ? JSON.stringify(m.trace) : null;
    const json =
      '{"id":' +
      JSON.stringify(m.id) +
      ',"lease_id":' +
      JSON.stringify(m.leaseId) +
      ',"route":' +
      route(m.route) +
      ',"target":' +
      target(m.target) +
      ',"payload_b64":"' +
      payload +
      '","headers":' +
      (m.headersJson ?? JSON.stringify(m.headers)) +
      (trace !== null ? ',"trace":' + trace : "") +
      ',"received_at":"' +
      receivedAt(m.receivedAtMs) +
      '","attempt":' +
      JSON.stringify(m.attempt) +
      ',"lease_until":"' +
      leaseUntil(m.leaseUntilMs) +
      '"}';
    each(json, i, m);
  }
}

/** Base64 of the bytes; a Buffer (what SQLite hands over) is encoded without a view made first. */
function base64(bytes: Uint8Array): string {
  return Buffer.isBuffer(bytes) ? bytes.toString("base64") : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** JSON.stringify of a string, remembering the last one. */
function lastJson(): (value: string) => string {
  let last: string | undefined;
  let lastJson = "";
  return (value) => {
    if (value !== last) {
      lastJson = JSON.stringify(value);
      last = value;
    }
    return lastJson;
  };
}

/**
 * Date → ISO-8601 remembering the last second: every item of a batch has the same lease_until, and
 * messages received in the same second differ only in their last three digits, which are written
 * onto the second's text (`YYYY-MM-DDTHH:MM:SS.` as toISOString wrote it) instead of a Date each.
 */
function lastIso(): (ms: number) => string {
  let lastSecond = NaN;
  let prefix = "";
  let lastMs = NaN;
  let last = "";
  return (ms) => {
    if (ms === lastMs) return last;
    const second = Math.floor(ms / 1000);
    if (second !== lastSecond) {
      const iso = new Date(ms).toISOString();
      // toISOString always ends in `.mmmZ`.
      prefix = iso.slice(0, -4);
      lastSecond = second;
      last = iso;
    } else {
      const millis = ms - second * 1000;
      last = prefix + (millis < 10 ? "00" : millis < 100 ? "0" : "") + millis + "Z";
    }
    lastMs = ms;
    return last;
  };
}
