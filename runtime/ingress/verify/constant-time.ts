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

/**
 * Index of the first candidate equal to `given`, or -1. Every candidate is compared, with no early exit, so the
 * time does not reveal which entry matched or how many were tried before it.
 */
export function matchesAny(given: Buffer | string, candidates: readonly (Buffer | string)[]): number {
  let matchedIndex = -1;
  for (let index = 0; index < candidates.length; index++) {
    const equal = safeEqual(given, candidates[index]);
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
