// Enqueue on PostgreSQL: calls made in the same moment are written by one transaction (group
// commit). Admission against queue_limits.max_depth is exact across instances: enqueuers take turns
// under an advisory lock and read the striped depth counter the triggers keep.
import { GroupCommitter, type PendingWrite } from "../group-commit.js";
import { positiveOrNull } from "../options.js";
import { StoreError, type NewMessage } from "../store.js";
import { postgresStoreError } from "./connect.js";
import type { PgContext } from "./context.js";
import * as q from "./queries.js";

type Batch = readonly NewMessage[];

export class EnqueueWriter {
  private readonly groups: GroupCommitter<Batch>;
  private readonly admissionLockKey: string;

  constructor(
    private readonly cx: PgContext,
    schema: string,
    private readonly assertOpen: () => void,
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
    let errors: (unknown | undefined)[];
    try {
      errors = await this.writeGroupOnce(writes, nowMs, false);
    } catch (error) {
      if ((error as { code?: string }).code !== "23505") throw postgresStoreError(error, "enqueue");
      try {
        errors = await this.writeGroupOnce(writes, nowMs, true);
      } catch (retryError) {
        throw postgresStoreError(retryError, "enqueue");
      }
    }
    this.cx.ready.notifyStored(writes.filter((_, i) => errors[i] === undefined).flatMap((write) => write.items), nowMs);
    return errors;
  }

  private async writeGroupOnce(writes: readonly PendingWrite<Batch>[], nowMs: number, perCaller: boolean): Promise<(unknown | undefined)[]> {
    const maxDepth = positiveOrNull(this.cx.limits.maxDepth);
    const errors: (unknown | undefined)[] = writes.map(() => undefined);
    await this.cx.sql.begin(async (tx) => {
      let room = Number.POSITIVE_INFINITY;
      if (maxDepth !== null) {
        // Exact admission across instances: enqueuers take turns; acks only ever lower the sum.
        await tx`SELECT pg_advisory_xact_lock(hashtext(${this.admissionLockKey}))`;
        const [{ active }] = await tx`SELECT coalesce(sum(active), 0)::int8 AS active FROM queue_depth`;
        room = maxDepth - active;
      }
      const admitted: number[] = [];
      writes.forEach((write, i) => {
        if (write.items.length > room) {
          errors[i] = new StoreError("queue_full", `queue depth ${maxDepth! - room} + ${write.items.length} would exceed max_depth ${maxDepth}`);
        } else {
          room -= write.items.length;
          admitted.push(i);
        }
      });
      if (admitted.length === 0) return;
      if (!perCaller) {
        await tx.unsafe(q.INSERT_MESSAGES_AND_NOTIFY, this.insertParams(admitted.flatMap((i) => writes[i].items), nowMs), { prepare: true });
        return;
      }
      for (const i of admitted) {
        try {
          await tx.savepoint((sp) => sp.unsafe(q.INSERT_MESSAGES_AND_NOTIFY, this.insertParams(writes[i].items, nowMs), { prepare: true }));
        } catch (itemError) {
          if ((itemError as { code?: string }).code !== "23505") throw itemError;
          errors[i] = duplicateError(itemError, writes[i].items);
        }
      }
    });
    return errors;
  }

  /** The parallel arrays INSERT_MESSAGES_AND_NOTIFY unnests, then the channel to notify. */
  private insertParams(items: Batch, nowMs: number): never[] {
    return [
      items.map((m) => m.id),
      items.map((m) => m.route),
      items.map((m) => m.target),
      items.map((m) => m.receivedAtMs ?? nowMs),
      items.map((m) => m.nextRunAtMs ?? nowMs),
      items.map((m) => Buffer.from(m.payload.buffer, m.payload.byteOffset, m.payload.byteLength).toString("hex")),
      items.map((m) => JSON.stringify(m.headers)),
      items.map((m) => (m.trace ? JSON.stringify(m.trace) : null)),
      this.cx.channel,
    ] as never[];
  }
}

/** Names the offending item from PostgreSQL's "Key (id)=(…) already exists." detail. */
function duplicateError(error: unknown, items: Batch): StoreError {
  const detail = String((error as { detail?: string }).detail ?? "");
  const match = /\(id\)=\((.*)\) already exists/.exec(detail);
  const index = match ? items.findIndex((m) => m.id === match[1]) : -1;
  const id = index >= 0 ? items[index].id : match?.[1] ?? "?";
  return new StoreError("duplicate_id", `message id ${id} already exists`, index >= 0 ? index : undefined);
}
