import { randomBytes } from "node:crypto";

// Store-generated ids follow the reference system (reference-behaviour §2 row 37): a prefix plus
// 16 hex characters from 8 random bytes. Publish supplies its own message ids.

/** A new message id: `evt_` + 16 hex characters. */
export function newMessageId(): string {
  return "evt_" + randomBytes(8).toString("hex");
}

/** A new lease id: `lease_` + 16 hex characters. */
export function newLeaseId(): string {
  return "lease_" + randomBytes(8).toString("hex");
}
