// The one SQLite connection of a store and how it writes: group commit for the hot paths (enqueue,
// dequeue, ack, nack, extend, attempts), where operations submitted in the same moment run in one
// transaction, each under its own savepoint unless it is stepwise (WriteShape), and share one
// fsync; and plain immediate transactions for the occasional write (lifecycle changes, pruning). A
// group holding a durable write commits with synchronous=FULL (the WAL fsync inside COMMIT); a group
// made only of deferred writes (ack, nack, attempt records: see the Store contract) commits with
// synchronous=NORMAL, so it is in the WAL before its callers are answered but is flushed by the next
// durable commit or checkpoint. better-sqlite3 is synchronous, so every transaction runs to
// completion without interleaving; no caller is answered before the commit that holds its work, and
// the event loop only ever sees committed state.
import type { Clock } from "../../time/clock.js";
import { GroupCommitter, type PendingWrite } from "../group-commit.js";
import type { StoreObserver } from "../observer.js";
import { StoreError } from "../store.js";
import { BackgroundCheckpointer } from "./checkpointer.js";
import { openSqliteDb, sqliteStoreError, type SqliteDb } from "./open-db.js";
import { prepareStatements, StatementCache, type SqliteStatements } from "./queries.js";

/** Registers work to run once the group holding the current operation has committed. */
export type AfterCommit = (hook: () => void) => void;

/**
 * `durable`: flushed to disk (fsync) before the caller is answered. `deferred`: committed to the WAL
 * (safe against a crash of Spool) and flushed by the next durable commit or checkpoint.
 */
export type Durability = "durable" | "deferred";

interface GroupedWrite {
  work: (afterCommit: AfterCommit) => void;
  durability: Durability;
  /** See WriteShape: the work needs no savepoint of its own. */
  stepwise: boolean;
  /** The work leaves queue_counters as it is (enqueues count through countInserted): see activeDepth(). */
  keepsCounter: boolean;
}

/**
 * How a grouped write may fail, which decides whether it runs under a SAVEPOINT of its own.
 * `atomic` (the default): a failure midway must undo everything the work wrote, so it gets one.
 * `stepwise`: what the work has written when it throws may commit as it is, because each of its
 * statements is whole by itself (SQLite undoes a statement that fails, with its triggers, or ends the
 * whole transaction, and then the group fails) and every prefix of them leaves a valid store: a
 * lease sweep, a complete settle, the one INSERT of a single-message enqueue. Its in-memory effects
 * follow the statements they describe. A savepoint is not free: every page the write dirties is
 * first copied into the in-memory statement journal (a malloc'd chunk list), and with the SAVEPOINT
 * and RELEASE statements that cost a batch-32 drain about 15% of its CPU (docs/decisions.md D48).
 */
export type WriteShape = "atomic" | "stepwise";

/** How many writes one group may hold; the rest wait for the next group. */
const MAX_GROUP = 512;

export class SqliteConnection {
  readonly db: SqliteDb;
  readonly sql: SqliteStatements;
  readonly dynamic: StatementCache;
  /** Gathers the writes submitted in the same moment into one group transaction (commitGroup). */
  private readonly groups = new GroupCommitter<GroupedWrite>(async (writes) => this.commitGroup(writes), MAX_GROUP);
  private readonly checkpointer: BackgroundCheckpointer | null;
  private closed = false;
  /**
   * Messages inserted by the writes of the running group, not yet added to queue_counters.active.
   * Schema 4 dropped the per-row insert trigger: one UPDATE just before the group's COMMIT adds
   * them all (a trigger made every ingress INSERT a two-statement write with a statement journal,
   * ~8k of its ~33k SQLite instructions). The delete and state-change triggers still apply.
   */
  private insertedInGroup = 0;
  /**
   * queue_counters.active as read by the first enqueue of the running group. It stays right for
   * the enqueues after it until a write that may change the counter (ack, nack, lease expiry:
   * triggers) runs in the group, which clears it: one counter read per group instead of per enqueue.
   */
  private storedActive: number | null = null;

  constructor(
    path: string,
    busyTimeoutMs: number,
    readonly clock: Clock,
    private readonly observer: StoreObserver,
    /** A reader beside the owning process: no writes, no checkpoints (docs/mcp.md). */
    readonly readOnly = false,
  ) {
    this.db = openSqliteDb(path, busyTimeoutMs, clock.now(), readOnly);
    this.sql = prepareStatements(this.db);
    this.dynamic = new StatementCache(this.db);
    this.checkpointer = path === ":memory:" || readOnly ? null : new BackgroundCheckpointer(path, observer);
  }

  assertOpen(): void {
    if (this.closed) throw new StoreError("closed", "the store is closed");
  }

  /**
   * Runs `work` in the next group transaction; resolves with its result once that transaction has
   * committed (for a durable write, with the WAL fsynced inside COMMIT).
   */
  grouped<R>(work: (afterCommit: AfterCommit) => R, durability: Durability = "durable", shape: WriteShape = "atomic"): Promise<R> {
    let result: R;
    return this.groups
      .submit({ work: (afterCommit) => void (result = work(afterCommit)), durability, stepwise: shape === "stepwise", keepsCounter: false })
      .then(() => result);
  }

  /**
   * An enqueue: grouped() without a result (the group's own promise, one reaction fewer per call),
   * for work whose only counter change goes through countInserted(). A single-message enqueue is
   * `stepwise` (one INSERT, after any refusal).
   */
  groupedEnqueue(work: (afterCommit: AfterCommit) => void, shape: WriteShape): Promise<void> {
    return this.groups.submit({ work, durability: "durable", stepwise: shape === "stepwise", keepsCounter: true });
  }

  /** Active depth as max_depth sees it inside a group write: the stored counter plus this group's inserts. */
  activeDepth(): number {
    this.storedActive ??= this.sql.activeDepth.get() as number;
    return this.storedActive + this.insertedInGroup;
  }

  /** Called by a group write that changed queue_counters itself (through a trigger): read it again. */
  forgetActiveDepth(): void {
    this.storedActive = null;
  }

  /** Called by a group write once its messages are inserted; undone if that write fails. */
  countInserted(messages: number): void {
    this.insertedInGroup += messages;
  }

  /** An immediate transaction of its own (or part of the one running), reported to the observer. */
  write<T>(work: () => T): T {
    if (this.db.inTransaction) return work();
    const started = performance.now();
    try {
      const result = this.db.transaction(work).immediate();
      this.observer.sqliteEvent("tx_commit", (performance.now() - started) / 1000, "durable");
      return result;
    } catch (error) {
      this.reportBusy(error);
      this.observer.sqliteEvent("tx_rollback");
      throw error;
    }
  }

  /** Returns leases that ran out to queued, so a read sees what a dequeue would. */
  expireLeases(): void {
    // A reader leaves expired leases to the owner, which returns them on its next read or dequeue.
    if (this.readOnly) return;
    const nowMs = this.clock.now();
    this.write(() => this.sql.expireLeases.run(nowMs));
  }

  /** A passive checkpoint keeps the WAL from growing between automatic checkpoints. */
  checkpoint(): void {
    const started = performance.now();
    try {
      this.db.pragma("wal_checkpoint(PASSIVE)");
      this.observer.sqliteEvent("checkpoint", (performance.now() - started) / 1000);
    } catch {
      this.observer.sqliteEvent("checkpoint_error");
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Let the groups already queued commit before the connection goes away.
    await new Promise((resolve) => setImmediate(resolve));
    await this.groups.idle();
    this.closed = true;
    await this.checkpointer?.stop();
    this.db.close();
  }

  /**
   * One group transaction: each write under its own SAVEPOINT, so one caller's refusal or failure
   * never fails its neighbours; hooks (wake-ups) run only after the commit. Returns each write's
   * error (undefined = written), or throws to fail them all. A group holding a durable write
   * commits with synchronous=FULL, as the connection is set: SQLite fsyncs the WAL inside COMMIT,
   * before anyone is answered. A group of deferred writes only commits with NORMAL (the frames are
   * written, the fsync is left to the next durable commit or checkpoint).
   *
   * The fsync stays inside COMMIT, on the event loop: fsyncing on the thread pool split the writes
   * arriving meanwhile into many small groups and cost more CPU for no gain (docs/decisions.md D48).
   */
  private commitGroup(writes: readonly PendingWrite<GroupedWrite>[]): (unknown | undefined)[] {
    if (this.closed) throw new StoreError("closed", "the store is closed");
    const durable = writes.some((w) => w.items.durability === "durable");
    if (durable) return this.runGroup(writes, "durable");
    // Not a prepared statement: SQLite applies `PRAGMA synchronous` when it compiles it.
    this.db.exec("PRAGMA synchronous = NORMAL");
    try {
      return this.runGroup(writes, "deferred");
    } finally {
      this.db.exec("PRAGMA synchronous = FULL");
    }
  }

  private runGroup(writes: readonly PendingWrite<GroupedWrite>[], durability: Durability): (unknown | undefined)[] {
    const started = performance.now();
    const errors: (unknown | undefined)[] = [];
    const hooks: (() => void)[] = [];
    // One hook list for the group: a failed write's hooks are cut off again (no list per write).
    const afterCommit: AfterCommit = (hook) => void hooks.push(hook);
    try {
      this.sql.begin.run();
    } catch (error) {
      this.reportBusy(error);
      throw sqliteStoreError(error, "write");
    }
    try {
      for (const write of writes) {
        const hooksBefore = hooks.length;
        const insertedBefore = this.insertedInGroup;
        const savepoint = !write.items.stepwise;
        if (!write.items.keepsCounter) this.storedActive = null;
        if (savepoint) this.sql.savepoint.run();
        try {
          write.items.work(afterCommit);
          if (savepoint) this.sql.release.run();
          errors.push(undefined);
        } catch (error) {
          hooks.length = hooksBefore;
          this.insertedInGroup = insertedBefore;
          if (savepoint) {
            this.sql.rollbackToSavepoint.run();
            this.sql.release.run();
          } else if (!this.db.inTransaction) {
            // Some failures (I/O, disk full) end the whole transaction, not just the statement: then
            // the group fails, as it does when ROLLBACK TO finds no savepoint.
            throw error;
          }
          errors.push(error instanceof StoreError ? error : sqliteStoreError(error, "write"));
        }
      }
      if (this.insertedInGroup > 0) this.sql.addActive.run(this.insertedInGroup);
      this.sql.commit.run();
      this.observer.sqliteEvent("tx_commit", (performance.now() - started) / 1000, durability);
    } catch (error) {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      this.observer.sqliteEvent("tx_rollback");
      throw sqliteStoreError(error, "write");
    } finally {
      this.insertedInGroup = 0;
      this.storedActive = null;
    }
    for (const hook of hooks) hook();
    return errors;
  }

  private reportBusy(error: unknown): void {
    if (((error as { code?: string }).code ?? "").startsWith("SQLITE_BUSY")) this.observer.sqliteEvent("busy");
  }
}
