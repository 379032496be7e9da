// Group commit: calls made in the same moment (the SQLite store's hot-path writes, PostgreSQL
// enqueues, the delivery acks and attempt records of runtime/delivery/store-queue.ts) are written by
// one transaction, so one fsync serves many callers.
// No caller's promise settles before the commit holding its writes (docs/decisions.md D40), and
// one caller's failure does not fail its neighbours.

export interface PendingWrite<T> {
  items: T;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Writes one group; returns per-write errors (undefined = written) or throws to fail them all. */
export type GroupWriter<T> = (writes: readonly PendingWrite<T>[]) => Promise<(unknown | undefined)[]>;

export class GroupCommitter<T> {
  private pending: PendingWrite<T>[] = [];
  private flushing = false;
  private scheduled = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly write: GroupWriter<T>,
    /** How many writes one group may hold; the rest wait for the next group. */
    private readonly maxGroup = 512,
  ) {}

  submit(items: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ items, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once no write is pending or being written. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.pending.length === 0 && !this.flushing && !this.scheduled;
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    // setImmediate, not a microtask: callers whose requests arrive in the same I/O phase join the group.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return this.settleIdle();
    this.flushing = true;
    const group = this.pending.splice(0, this.maxGroup);
    try {
      const errors = await this.write(group);
      group.forEach((w, i) => (errors[i] === undefined ? w.resolve() : w.reject(errors[i])));
    } catch (error) {
      for (const w of group) w.reject(error);
    } finally {
      this.flushing = false;
      // Nothing schedules while a group is written, so with nothing pending this is idle.
      if (this.pending.length > 0) this.schedule();
      else this.settleIdle();
    }
  }

  private settleIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
