import { randomFillSync } from "node:crypto";

// Store-generated ids follow the reference system (reference-behaviour §2 row 37): a prefix plus
// 16 hex characters from 8 random bytes. Publish supplies its own message ids.

// One call into the CSPRNG per 512 ids instead of one per id: ingress makes an id per request, and
// a synchronous 8-byte randomBytes costs more than the rest of id handling together. Every id
// still takes 8 bytes of its own; no byte is handed out twice.
const ID_BYTES = 8;
const pool = Buffer.alloc(ID_BYTES * 512);
let offset = pool.length;

function randomHex(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString("hex", offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return hex;
}

/** A new message id: `evt_` + 16 hex characters. */
export function newMessageId(): string {
  return "evt_" + randomHex();
}

/** A new lease id: `lease_` + 16 hex characters. */
export function newLeaseId(): string {
  return "lease_" + randomHex();
}
