// Enqueue on the SQLite backend: one caller's batch joins the connection's next group commit; the
// max_depth refusal (and, under drop_policy drop_oldest, the removal of the oldest queued messages)
// comes before the INSERTs, and the caller's savepoint undoes them all when the batch is refused.
import { positiveOrNull } from "../options.js";
import type { NewMessage } from "../records.js";
import { StoreError } from "../store.js";
import type { SqliteContext } from "./context.js";

/**
 * drop_policy drop_oldest: the oldest queued messages, as lists order them, through an index of the
 * queued messages alone that the store keeps only while drop_oldest is configured (applyDropPolicyIndex,
 * at open, creates or drops it): messages_received holds every state, and walking the delivered, dead and
 * leased entries older than the oldest queued one took milliseconds per enqueue on the event loop
 * (12 ms past 50,000 dead messages); an index every queue paid for would cost every enqueue and
 * lease one more b-tree write.
 */
const QUEUED_RECEIVED_INDEX = "messages_queued_received";
const DROP_OLDEST_QUEUED = `DELETE FROM messages WHERE rowid IN (SELECT rowid FROM messages INDEXED BY ${QUEUED_RECEIVED_INDEX} WHERE state = 'queued' ORDER BY received_at, id LIMIT ?)`;

/** Creates the drop_oldest index when drop_oldest is configured and drops it otherwise (see above). */
export function applyDropPolicyIndex(cx: SqliteContext): void {
  cx.conn.db.exec(
    cx.limits.dropOldest
      ? `CREATE INDEX IF NOT EXISTS ${QUEUED_RECEIVED_INDEX} ON messages(received_at, id) WHERE state = 'queued'`
      : `DROP INDEX IF EXISTS ${QUEUED_RECEIVED_INDEX}`,
  );
}

/** Resolves once the batch is committed (durably); the group's own promise, one reaction fewer per call. */
export function enqueue(cx: SqliteContext, items: readonly NewMessage[]): Promise<void> {
  if (items.length === 0) return Promise.resolve();
  // One message is one INSERT, and a refusal (queue_full) comes before it: stepwise, unless
  // drop_oldest may remove messages before the refusal or the INSERT.
  return cx.conn.groupedEnqueue((afterCommit) => {
    const nowMs = cx.clock.now();
    const dropped = insertBatch(cx, items, nowMs);
    afterCommit(() => {
      cx.ready.notifyStored(items, nowMs);
      if (dropped > 0) cx.observer.dropped(dropped);
    });
  }, items.length === 1 && !cx.limits.dropOldest ? "stepwise" : "atomic");
}

/**
 * Inserts one caller's batch; a refusal throws, and the caller's savepoint (for one message: the
 * failed INSERT's own statement rollback) undoes what was inserted, and what drop_oldest removed.
 * The inserted messages reach queue_counters through the connection's per-group count, not a
 * trigger (schema 4). Returns how many queued messages were removed to make room.
 */
function insertBatch(cx: SqliteContext, items: readonly NewMessage[], nowMs: number): number {
  const maxDepth = positiveOrNull(cx.limits.maxDepth);
  let dropped = 0;
  if (maxDepth !== null) {
    const active = cx.conn.activeDepth();
    const over = active + items.length - maxDepth;
    if (over > 0 && cx.limits.dropOldest) dropped = dropOldestQueued(cx, over, items);
    if (over > dropped) {
      throw new StoreError("queue_full", `queue depth ${active} + ${items.length} would exceed max_depth ${maxDepth}`);
    }
  }
  items.forEach((item, index) => {
    try {
      cx.sql.insert.run(
        item.id,
        item.route,
        item.target,
        item.receivedAtMs ?? nowMs,
        item.nextRunAtMs ?? nowMs,
        item.payload,
        JSON.stringify(item.headers),
        item.trace ? JSON.stringify(item.trace) : null,
      );
    } catch (error) {
      const code = (error as { code?: string }).code ?? "";
      if (code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "SQLITE_CONSTRAINT_UNIQUE") {
        throw new StoreError("duplicate_id", `message id ${item.id} already exists`, index);
      }
      throw error;
    }
  });
  cx.conn.countInserted(items.length);
  return dropped;
}

/**
 * Removes up to `count` of the oldest queued messages (drop_policy drop_oldest) to make room for
 * `items`; returns how many. A batch naming a stored message is refused duplicate_id first: the
 * message it names could otherwise be the one removed, and silently replaced.
 */
function dropOldestQueued(cx: SqliteContext, count: number, items: readonly NewMessage[]): number {
  const ids = JSON.stringify(items.map((item) => item.id));
  const taken = cx.conn.dynamic.get("SELECT id FROM messages WHERE id IN (SELECT value FROM json_each(?)) LIMIT 1").pluck().get(ids) as string | undefined;
  if (taken !== undefined) throw new StoreError("duplicate_id", `message id ${taken} already exists`, items.findIndex((item) => item.id === taken));
  const dropped = cx.conn.dynamic.get(DROP_OLDEST_QUEUED).run(count).changes;
  // The delete trigger lowered queue_counters.active.
  cx.conn.forgetActiveDepth();
  return dropped;
}
