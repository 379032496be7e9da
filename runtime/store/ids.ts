import { randomFillSync } from "node:crypto";

// Store-generated ids keep the reference system's shape (docs/decisions.md D47): a prefix
// plus 16 hex characters. Publish supplies its own message ids.
//
// Lease ids are 8 random bytes: holding one lets a worker settle a message, so they must not be
// guessable. Message ids are not secrets, and what matters for them is where they land in the
// store's id index: random keys dirty a different index page for every row of a commit, so each
// ingress commit writes several times the WAL it needs (measured: 1.25–2× fewer enqueues/s on
// SQLite). A message id is therefore a 32-bit random stream prefix chosen per process followed by a
// 32-bit counter starting at a random value: one process's ids are consecutive in the index, two
// processes (several instances on one PostgreSQL) use different streams, and a stream is replaced
// by a fresh random one before its counter wraps. Ids reveal their own order, nothing else.

// One call into the CSPRNG per 512 ids instead of one per id: a synchronous 8-byte randomBytes
// costs more than the rest of id handling together. Every id still takes bytes of its own; no
// byte is handed out twice.
const POOL = Buffer.alloc(8 * 512);
let poolOffset = POOL.length;

function randomBytesFromPool(count: number): Buffer {
  if (poolOffset + count > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const bytes = POOL.subarray(poolOffset, poolOffset + count);
  poolOffset += count;
  return bytes;
}

const COUNTER_SPAN = 2 ** 32;

/** The current message id stream: a random prefix and how many ids it may still hand out. */
let streamPrefix = "";
let counter = 0;
let remaining = 0;
/** `evt_`, the prefix and the counter's upper 6 hex digits: shared by the 256 ids that follow. */
let head = "";

/** Two hex digits per byte value: formatting an id is then a table lookup, not a number-to-text conversion. */
const HEX_BYTE = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

function newStream(): void {
  const bytes = randomBytesFromPool(8);
  streamPrefix = bytes.toString("hex", 0, 4);
  startCounterAt(bytes.readUInt32BE(4));
}

function startCounterAt(value: number): void {
  counter = value;
  // The counter never wraps inside a stream, so a stream never repeats an id.
  remaining = COUNTER_SPAN - value;
  head = headFor(value);
}

function headFor(value: number): string {
  return "evt_" + streamPrefix + HEX_BYTE[value >>> 24] + HEX_BYTE[(value >>> 16) & 0xff] + HEX_BYTE[(value >>> 8) & 0xff];
}

/** A new message id: `evt_` + 8 hex of the stream prefix + 8 hex of its counter. */
export function newMessageId(): string {
  if (remaining === 0) newStream();
  const low = counter & 0xff;
  if (low === 0) head = headFor(counter);
  const id = head + HEX_BYTE[low];
  counter++;
  remaining--;
  return id;
}

/**
 * Leaves the current message id stream for a fresh random one. Called when a generated id turned out
 * to be taken already: publish accepts ids its caller chooses, and the ids after a stream's last one
 * can be guessed, so the ids that follow in the same stream may be taken as well.
 */
export function abandonMessageIdStream(): void {
  newStream();
}

/** A new lease id: `lease_` + 16 hex characters from 8 random bytes. */
export function newLeaseId(): string {
  return "lease_" + randomBytesFromPool(8).toString("hex");
}

/** Test seam: starts a new message id stream at the given counter value (to exercise its end). */
export function restartMessageIdStreamAt(value: number): void {
  newStream();
  startCounterAt(value);
}
