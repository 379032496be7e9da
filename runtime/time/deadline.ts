// A promise raced against real time, for calls that must not wait longer than a bound (a health
// refresh, a lookup on a database that may have stopped answering).

/** `work`, or a rejection once `ms` (real time) have passed without its answer. */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
