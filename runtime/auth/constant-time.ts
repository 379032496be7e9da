// Secret comparisons that take the same time whatever the inputs share.
import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Equality of two byte strings of any length in constant time. Both sides are hashed first, so
 * timingSafeEqual always sees two 32-byte buffers and a length difference cannot short-circuit.
 */
export function safeEqual(a: Buffer | string, b: Buffer | string): boolean {
  const digestA = createHash("sha256").update(a).digest();
  const digestB = createHash("sha256").update(b).digest();
  return timingSafeEqual(digestA, digestB);
}

// Candidate lists come from the compiled config and live until the next reload; their digests are
// computed once per list instead of once per request.
const candidateDigests = new WeakMap<readonly (Buffer | string)[], Buffer[]>();

const digest = (value: Buffer | string) => createHash("sha256").update(value).digest();

/** The digest matchesAny compares: a caller checking one value against several lists hashes it once. */
export const secretDigest = digest;

/**
 * Index of the first candidate equal to `given`, or -1. Every candidate is compared, with no early
 * exit, so the time does not reveal which entry matched or how many were tried before it.
 * `candidates` is treated as immutable: its digests are cached per array (pass the config's list).
 */
export function matchesAny(given: Buffer | string, candidates: readonly (Buffer | string)[], givenDigest = digest(given)): number {
  let digests = candidateDigests.get(candidates);
  if (!digests) {
    digests = candidates.map(digest);
    candidateDigests.set(candidates, digests);
  }
  let matchedIndex = -1;
  for (let index = 0; index < digests.length; index++) {
    const equal = timingSafeEqual(givenDigest, digests[index]);
    if (equal && matchedIndex < 0) matchedIndex = index;
  }
  return matchedIndex;
}
/** Equality of two MACs of the expected length; a wrong-length value is compared against itself so the work is the same. */
export function macEqual(expected: Buffer, given: Buffer): boolean {
  if (given.length !== expected.length) {
    timingSafeEqual(expected, expected);
    return false;
  }
  return timingSafeEqual(expected, given);
}
