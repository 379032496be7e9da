// Enqueue on PostgreSQL: calls made in the same moment are written by one transaction (group
// commit). Admission against queue_limits.max_depth is exact across instances: enqueuers take turns
// under an advisory lock and read the striped depth counter the triggers keep.
import { isUtf8 } from "node:buffer";
import { GroupCommitter, type PendingWrite } from "../group-commit.js";
import type { StoreObserver } from "../observer.js";
import { positiveOrNull } from "../options.js";
import type { NewMessage } from "../records.js";
import { StoreError } from "../store.js";
import { isConnectionLoss, postgresStoreError, type Tx } from "./connect.js";
import type { PgContext, Row } from "./context.js";
import { withDeadline } from "../../time/deadline.js";
import * as q from "./queries.js";

type Batch = readonly NewMessage[];

/** Per caller: undefined (written) or why not; and how many queued messages drop_oldest removed. */
interface GroupOutcome {
  errors: (unknown | undefined)[];
  dropped: number;
}

/** max_depth admission within one group's transaction. */
interface Admission {
  maxDepth: number;
  /** How many more messages fit. */
  room: number;
}

/** How long the lookup after a lost connection may take before the outcome is left unknown. */
const LOOKUP_BUDGET_MS = 2_000;

/**
 * A failure that may have come after the transaction's COMMIT reached the server: the session was
 * lost while in use (closed, reset, terminated). One that came before any session was had (connect
 * timeout, refused, no such host) wrote nothing.
 */
function mayHaveCommitted(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code ?? "");
  return isConnectionLoss(error) && !/^CONNECT_TIMEOUT$|^ECONNREFUSED$|^ENOTFOUND$|^EAI_AGAIN$|^EHOSTUNREACH$|^ENETUNREACH$/.test(code);
}

export class EnqueueWriter {
  private readonly groups: GroupCommitter<Batch>;
  private readonly admissionLockKey: string;

  constructor(
    private readonly cx: PgContext,
    schema: string,
    private readonly assertOpen: () => void,
    private readonly observer: StoreObserver,
  ) {
    this.groups = new GroupCommitter((writes) => this.writeGroup(writes));
    this.admissionLockKey = "spool-admission:" + schema;
  }

  /** Resolves once the batch is committed; rejects with duplicate_id, queue_full or unavailable. */
  submit(items: Batch): Promise<void> {
    return this.groups.submit(items);
  }

  /**
   * One transaction per group. The fast path inserts every caller's messages (and notifies other
   * instances) in one statement. A duplicate id aborts that transaction; the group is then written
   * again with one savepoint per caller, so only the caller with the duplicate fails.
   */
  private async writeGroup(writes: readonly PendingWrite<Batch>[]): Promise<(unknown | undefined)[]> {
    this.assertOpen();
    const nowMs = this.cx.clock.now();
    const failed = (error: unknown) => this.outcomeOfFailedGroup(writes, nowMs, error);
    const { errors, dropped } = await this.writeGroupPipelined(writes, nowMs)
      .then((outcome) => outcome ?? this.writeGroupOnce(writes, nowMs, false))
      .catch((error: unknown) =>
      (error as { code?: string }).code === "23505" ? this.writeGroupOnce(writes, nowMs, true).catch(failed) : failed(error),
    );
    if (dropped > 0) this.observer.dropped(dropped);
    this.cx.ready.notifyStored(writes.filter((_, i) => errors[i] === undefined).flatMap((write) => write.items), nowMs);
    return errors;
  }

  /**
   * A group whose transaction failed: every caller fails `unavailable` (thrown), unless the
   * connection went while in use, perhaps during COMMIT. Whether it committed is then unknown, and a
   * caller told "refused" must not find its message stored (docs/decisions.md D16, D44). One
   * transaction holds the group, so each caller's messages are all stored or none: a caller whose
   * messages are all there (lookupStored) has been written. The others get `unavailable`, and so
   * does every caller when the lookup cannot be made either (the outcome then stays unknown: a
   * caller so refused may find its message stored).
   */
  private async outcomeOfFailedGroup(writes: readonly PendingWrite<Batch>[], nowMs: number, error: unknown): Promise<GroupOutcome> {
    const refusal = postgresStoreError(error, "enqueue");
    if (!mayHaveCommitted(error)) throw refusal;
    const stored = await this.lookupStored(writes.flatMap((write) => write.items), nowMs);
    return { errors: writes.map((write) => (stored && write.items.every((m) => stored.has(m.id)) ? undefined : refusal)), dropped: 0 };
  }

  /**
   * The ids of `items` stored as this group wrote them (id and received_at, so an older message
   * with a published id does not count), looked up on a new session. The same outage may take that
   * session too: a few tries, at most LOOKUP_BUDGET_MS in all (a host that stopped answering would
   * hold each for the connect timeout). Undefined when no try answered.
   */
  private async lookupStored(items: readonly NewMessage[], nowMs: number): Promise<Set<string> | undefined> {
    const params = [items.map((m) => m.id), items.map((m) => m.receivedAtMs ?? nowMs)];
    const deadline = performance.now() + LOOKUP_BUDGET_MS;
    for (const waitMs of [0, 100, 200, 400, 800]) {
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      try {
        const rows: Row[] = await withDeadline(this.cx.sql.unsafe(q.STORED_AS_WRITTEN, params, { prepare: true }) as Promise<Row[]>, left);
        return new Set(rows.map((row) => row.id as string));
      } catch {
        // tried again, while the budget lasts
      }
    }
    return undefined;
  }

  /**
   * The common case in one round trip: without max_depth the insert alone (one statement is one
   * transaction); with it BEGIN, the admission lock, the insert if the whole group fits
   * (INSERT_MESSAGES_IF_ROOM) and COMMIT, sent together. Null when the group does not fit (some
   * callers are refused, or drop_oldest must remove messages): writeGroupOnce writes it then, caller
   * by caller. Throws like writeGroupOnce (a duplicate: code 23505).
   */
  private async writeGroupPipelined(writes: readonly PendingWrite<Batch>[], nowMs: number): Promise<GroupOutcome | null> {
    const maxDepth = positiveOrNull(this.cx.limits.maxDepth);
    const items = writes.length === 1 ? writes[0].items : writes.flatMap((w) => w.items);
    const outcome: GroupOutcome = { errors: writes.map(() => undefined), dropped: 0 };
    if (maxDepth === null) {
      await this.cx.sql.unsafe(q.INSERT_MESSAGES_AND_NOTIFY, this.insertParams(items, nowMs), { prepare: true });
      return outcome;
    }
    if (items.length > maxDepth) return null;
    const conn = await this.cx.sql.reserve();
    try {
      const params = [...this.insertParams(items, nowMs), maxDepth - items.length] as never[];
      // After a failed statement the server answers this COMMIT with a rollback.
      const [began, locked, inserted, committed] = await Promise.allSettled([
        conn`BEGIN`,
        conn`SELECT pg_advisory_xact_lock(hashtext(${this.admissionLockKey}))`,
        conn.unsafe(q.INSERT_MESSAGES_IF_ROOM, params, { prepare: true }),
        conn`COMMIT`,
      ]);
      for (const settled of [began, locked, inserted, committed]) if (settled.status === "rejected") throw settled.reason;
      // Every row inserted notifies its route: no row back, nothing written.
      return (inserted as PromiseFulfilledResult<Row[]>).value.length > 0 ? outcome : null;
    } finally {
      conn.release();
    }
  }

  private async writeGroupOnce(writes: readonly PendingWrite<Batch>[], nowMs: number, perCaller: boolean): Promise<GroupOutcome> {
    const maxDepth = positiveOrNull(this.cx.limits.maxDepth);
    const outcome: GroupOutcome = { errors: writes.map(() => undefined), dropped: 0 };
    await this.cx.sql.begin(async (tx) => {
      // Without max_depth every caller is admitted.
      let admission: Admission | null = null;
      if (maxDepth !== null) {
        // Exact admission across instances: enqueuers take turns; acks only ever lower the sum.
        await tx`SELECT pg_advisory_xact_lock(hashtext(${this.admissionLockKey}))`;
        const [{ active }] = await tx`SELECT coalesce(sum(active), 0)::int8 AS active FROM queue_depth`;
        admission = { maxDepth, room: maxDepth - Number(active) };
      }
      // drop_oldest removes messages caller by caller, each under the savepoint that also holds its
      // insert: a removal may take messages of a caller admitted before it in this group, and is undone
      // with its caller's refusal.
      const mustDrop = admission !== null && this.cx.limits.dropOldest && writes.reduce((n, w) => n + w.items.length, 0) > admission.room;
      if (perCaller || mustDrop) return this.writeEachCaller(tx, writes, nowMs, admission, outcome);
      const admitted: number[] = [];
      for (const [i, write] of writes.entries()) {
        const refused = admission && admit(admission, write.items.length);
        if (refused) outcome.errors[i] = refused;
        else admitted.push(i);
      }
      if (admitted.length === 0) return;
      await tx.unsafe(q.INSERT_MESSAGES_AND_NOTIFY, this.insertParams(admitted.flatMap((i) => writes[i].items), nowMs), { prepare: true });
    });
    return outcome;
  }

  /** After a duplicate, or when drop_oldest must remove messages: each caller under its own savepoint, its removals included. */
  private async writeEachCaller(tx: Tx, writes: readonly PendingWrite<Batch>[], nowMs: number, admission: Admission | null, outcome: GroupOutcome): Promise<void> {
    for (const [i, write] of writes.entries()) {
      const before = admission && { ...admission };
      const droppedBefore = outcome.dropped;
      try {
        await tx.savepoint(async (sp) => {
          if (admission) {
            const refused = (await this.makeRoom(sp, admission, write.items, outcome)) ?? admit(admission, write.items.length);
            if (refused) throw refused;
          }
          await sp.unsafe(q.INSERT_MESSAGES_AND_NOTIFY, this.insertParams(write.items, nowMs), { prepare: true });
        });
      } catch (itemError) {
        // The savepoint undid this caller's removals: so does the count.
        if (admission && before) Object.assign(admission, before);
        outcome.dropped = droppedBefore;
        if (itemError instanceof StoreError) outcome.errors[i] = itemError;
        else if ((itemError as { code?: string }).code === "23505") outcome.errors[i] = duplicateError(itemError, write.items);
        else throw itemError;
      }
    }
  }

  /**
   * Under drop_oldest, when a caller's messages do not fit the room left, removes the oldest queued
   * messages to make room (inside the caller's savepoint, which a refusal undoes). A batch naming a
   * stored message is refused duplicate_id before anything is removed for it: the message it names
   * could otherwise be the one removed, and silently replaced.
   */
  private async makeRoom(sp: Tx, admission: Admission, items: Batch, outcome: GroupOutcome): Promise<StoreError | null> {
    const short = items.length - admission.room;
    if (short <= 0 || !this.cx.limits.dropOldest) return null;
    const [taken] = await sp.unsafe("SELECT id FROM messages WHERE id = ANY($1::text[]) LIMIT 1", [items.map((m) => m.id)] as never[], { prepare: true });
    if (taken) {
      const index = items.findIndex((m) => m.id === taken.id);
      return new StoreError("duplicate_id", `message id ${taken.id} already exists`, index >= 0 ? index : undefined);
    }
    const removed = await sp.unsafe(q.DROP_OLDEST_QUEUED, [short] as never[], { prepare: true });
    // Too few queued: refused at the depth before the removals, which the savepoint undoes.
    if (removed.count < short) return admit(admission, items.length);
    admission.room += removed.count;
    outcome.dropped += removed.count;
    return null;
  }

  /**
   * INSERT_MESSAGES_AND_NOTIFY's parameters: the rows as one JSON text, the payloads as one blob
   * (text when the server keeps text as UTF-8 and the bytes are UTF-8 without NUL, which a text
   * value cannot hold; else bytea), then the channel to notify.
   */
  private insertParams(items: Batch, nowMs: number): never[] {
    let at = 0;
    const rows = items.map((m) => {
      const row = {
        id: m.id,
        route: m.route,
        target: m.target,
        received_at: m.receivedAtMs ?? nowMs,
        next_run_at: m.nextRunAtMs ?? nowMs,
        at,
        len: m.payload.byteLength,
        headers: m.headers,
        trace: m.trace ?? null,
      };
      at += m.payload.byteLength;
      return row;
    });
    const bytes = items.length === 1 ? toBuffer(items[0].payload) : Buffer.concat(items.map((m) => m.payload), at);
    const asText = this.cx.sql.parameters.server_encoding === "UTF8" && isUtf8(bytes) && !bytes.includes(0);
    return [JSON.stringify(rows), asText ? bytes.toString("utf8") : null, asText ? null : bytes, this.cx.channel] as never[];
  }
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Takes `count` messages from the room left, or returns the queue_full refusal when they do not fit. */
function admit(admission: Admission, count: number): StoreError | null {
  if (count > admission.room) {
    return new StoreError("queue_full", `queue depth ${admission.maxDepth - admission.room} + ${count} would exceed max_depth ${admission.maxDepth}`);
  }
  admission.room -= count;
  return null;
}

/** Names the offending item from PostgreSQL's "Key (id)=(…) already exists." detail. */
function duplicateError(error: unknown, items: Batch): StoreError {
  const detail = String((error as { detail?: string }).detail ?? "");
  const match = /\(id\)=\((.*)\) already exists/.exec(detail);
  const index = match ? items.findIndex((m) => m.id === match[1]) : -1;
  const id = index >= 0 ? items[index].id : match?.[1] ?? "?";
  return new StoreError("duplicate_id", `message id ${id} already exists`, index >= 0 ? index : undefined);
}
