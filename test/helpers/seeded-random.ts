// A small seeded PRNG (mulberry32) for property tests: the same seed gives the same cases on every
// machine, so a failure printed with its seed can be replayed exactly.

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<T>(items: readonly T[]): T;
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (probability) => next() < probability,
    pick: (items) => items[Math.floor(next() * items.length)],
  };
}

/** A per-case seed derived from the run's seed, so one failing case replays on its own. */
export function caseSeed(runSeed: number, caseIndex: number): number {
  let h = (runSeed ^ Math.imul(caseIndex + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** Fuzz settings: a fixed default seed keeps CI deterministic; SPOOL_FUZZ_SEED / SPOOL_FUZZ_RUNS explore. */
export function fuzzSettings(defaultRuns: number): { seed: number; runs: number } {
  const seedText = process.env.SPOOL_FUZZ_SEED;
  const runsText = process.env.SPOOL_FUZZ_RUNS;
  const seed = seedText && seedText.trim() !== "" ? Number(seedText) >>> 0 : 20_260_101;
  const runs = runsText && runsText.trim() !== "" ? Math.max(1, Number(runsText) | 0) : defaultRuns;
  return { seed, runs };
}

/**
 * Runs one generated case of a property test; on failure the error names the run seed, the case
 * seed and the input (cut at 3,000 characters), which is everything needed to replay it.
 */
export function runProperty(runSeed: number, label: string, index: number, check: (rng: Random, show: (input: string) => void) => void): void {
  const thisSeed = caseSeed(runSeed, index);
  let input = "";
  try {
    check(seededRandom(thisSeed), (text) => (input = text));
  } catch (error) {
    const shown = input.length > 3000 ? input.slice(0, 3000) + "…" : input;
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${label} #${index} failed (SPOOL_FUZZ_SEED=${runSeed}, case seed ${thisSeed}): ${message}\ninput: ${JSON.stringify(shown)}`, {
      cause: error,
    });
  }
}
