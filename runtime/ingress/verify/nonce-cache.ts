// Replay protection for `auth hmac` nonces (docs/decisions.md D14). One instance lives
// for the process, outside the compiled config, so a reload does not reopen the replay window.
import type { NowClock } from "../../time/clock.js";

export interface NonceCacheOptions {
  /** Most nonces remembered; beyond it the one expiring first is forgotten. */
  capacity?: number;
  clock: NowClock;
}

export type NonceClaim = "claimed" | "replayed";

interface Entry {
  expiresAtMs: number;
  committed: boolean;
  /** Identifies this entry's heap record; heap records of replaced or removed entries are skipped. */
  generation: number;
}

interface HeapRecord {
  expiresAtMs: number;
  key: string;
  generation: number;
}

/** Two keys per request (its nonce and its signature: hmac.ts ReplayToken), so 100,000 requests. */
export const DEFAULT_NONCE_CAPACITY = 200_000;

/**
 * A nonce is claimed provisionally once its request's signature verified. While provisional it
 * refuses a concurrent replay; `commit` keeps it until it expires (the message was stored),
 * `release` forgets it (the message was refused with 413/429/503), so the sender's retry works.
 */
export class NonceCache {
  readonly capacity: number;
  readonly #clock: NowClock;
  readonly #entries = new Map<string, Entry>();
  // Min-heap by expiry: expired nonces and, when full, the earliest-expiring one leave in O(log n).
  #heap: HeapRecord[] = [];
  #generation = 0;

  constructor(options: NonceCacheOptions) {
    this.capacity = Math.max(1, options.capacity ?? DEFAULT_NONCE_CAPACITY);
    this.#clock = options.clock;
  }

  get size(): number {
    return this.#entries.size;
  }

  claim(key: string, expiresAtMs: number): NonceClaim {
    const nowMs = this.#clock.now();
    this.#dropExpired(nowMs);
    if (this.#entries.has(key)) return "replayed";
    if (expiresAtMs <= nowMs) return "claimed"; // nothing to remember: the request is already outside its window
    while (this.#entries.size >= this.capacity) this.#evictEarliest();
    const generation = ++this.#generation;
    this.#entries.set(key, { expiresAtMs, committed: false, generation });
    this.#push({ expiresAtMs, key, generation });
    this.#compactIfSparse();
    return "claimed";
  }

  commit(key: string): void {
    const entry = this.#entries.get(key);
    if (entry) entry.committed = true;
  }

  /** Forgets a provisional claim; a committed nonce stays (a late release must not reopen a replay). */
  release(key: string): void {
    const entry = this.#entries.get(key);
    if (entry && !entry.committed) this.#entries.delete(key);
  }

  #dropExpired(nowMs: number): void {
    while (this.#heap.length > 0 && this.#heap[0].expiresAtMs <= nowMs) {
      const record = this.#pop();
      if (this.#entries.get(record.key)?.generation === record.generation) this.#entries.delete(record.key);
    }
  }

  #evictEarliest(): void {
    while (this.#heap.length > 0) {
      const record = this.#pop();
      if (this.#entries.get(record.key)?.generation === record.generation) {
        this.#entries.delete(record.key);
        return;
      }
    }
  }

  // Released entries leave their heap records behind; rebuild once they dominate.
  #compactIfSparse(): void {
    if (this.#heap.length <= 2 * this.#entries.size + 1024) return;
    this.#heap = [];
    for (const [key, entry] of this.#entries) this.#push({ expiresAtMs: entry.expiresAtMs, key, generation: entry.generation });
  }

  #push(record: HeapRecord): void {
    const heap = this.#heap;
    heap.push(record);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent].expiresAtMs <= heap[index].expiresAtMs) break;
      [heap[parent], heap[index]] = [heap[index], heap[parent]];
      index = parent;
    }
  }

  #pop(): HeapRecord {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let index = 0;
      for (;;) {
        const left = 2 * index + 1;
        const right = left + 1;
        let smallest = index;
        if (left < heap.length && heap[left].expiresAtMs < heap[smallest].expiresAtMs) smallest = left;
        if (right < heap.length && heap[right].expiresAtMs < heap[smallest].expiresAtMs) smallest = right;
        if (smallest === index) break;
        [heap[smallest], heap[index]] = [heap[index], heap[smallest]];
        index = smallest;
      }
    }
    return top;
  }
}
