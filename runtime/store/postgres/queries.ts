// SQL text of the PostgreSQL hot paths (prepared by the driver on first use per connection) and a
// small builder for the dynamic filters of lists and lifecycle mutations.
import type { SettleKind } from "../settled-leases.js";
import { MESSAGE_STATES, type Selector } from "../records.js";
import { StoreError } from "../store.js";

const leaseSelect = (byTarget: boolean, until = byTarget ? "$7" : "$6") => `
WITH picked AS (
  SELECT id, next_run_at, received_at FROM messages
  WHERE state = 'queued' AND route = $1 AND next_run_at <= $2 AND next_run_at >= $5 ${byTarget ? "AND target = $6" : ""}
  ORDER BY next_run_at, received_at, id LIMIT $3
  FOR UPDATE SKIP LOCKED
), numbered AS (
  SELECT id, next_run_at AS ready_at, row_number() OVER (ORDER BY next_run_at, received_at, id) AS rn FROM picked
)
UPDATE messages m SET state = 'leased', attempt = m.attempt + 1,
  lease_id = ($4::text[])[n.rn], lease_until = (${until}::int8[])[n.rn], next_run_at = (${until}::int8[])[n.rn]
FROM numbered n WHERE m.id = n.id
RETURNING m.id, m.lease_id, m.route, m.target, replace(encode(m.payload, 'base64'), E'\\n', '') AS payload_b64,
  m.headers::text AS headers_json, m.trace::text AS trace_json, m.received_at, m.attempt, m.lease_until, n.rn, n.ready_at`;

/**
 * Dequeue, for one or more requests of the same route (and target) at once: $1 route, $2 now, $3
 * how many rows in all, $4 a lease id per row, $5 the scan's floor (lowest next_run_at it looks at;
 * see LeaseOps.leaseReady), $6 a lease_until per row (or $6 target, $7 lease_until per row). Row
 * number rn (1-based, in dequeue order) takes the rn-th lease id and lease_until. The payload comes
 * back as base64 (without the line breaks encode() puts every 76 characters) and the headers and
 * trace as their stored JSON text, as the Pull API writes them (runtime/store/stored-lease.ts): base64
 * is a third smaller than hex `bytea` on the wire, and neither is decoded only to be encoded again.
 */
export const LEASE_READY = leaseSelect(false);
export const LEASE_READY_FOR_TARGET = leaseSelect(true);

/** drop_policy drop_oldest: $1 of the oldest queued messages, as lists order them. */
export const DROP_OLDEST_QUEUED = `DELETE FROM messages WHERE id IN (
  SELECT id FROM messages WHERE state = 'queued' ORDER BY received_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)`;

// lease_id stays until the row is leased again or settled (a late ack is then told lease_expired).
export const EXPIRE_LEASES = `UPDATE messages SET state = 'queued', lease_until = NULL
  WHERE state = 'leased' AND lease_until <= $1`;

/**
 * Inserts a batch and, on commit, NOTIFYs channel $4 once per route. $1: one JSON array of the rows
 * (id, route, target, received_at, next_run_at, headers, trace, and where the row's payload lies
 * in the batch's payload bytes: `at`, `len`). The payload bytes come as one value: $2 text when
 * they are UTF-8 (the common JSON body, sent as it is), else $3 bytea (which the driver sends hex
 * encoded). One JSON text and one blob cost the driver far less to send than eight parallel arrays,
 * each element escaped, with every payload twice its size in hex (docs/benchmarks.md). Headers stay
 * the text JSON.stringify wrote (a json column keeps it), the sender's order included.
 */
export const INSERT_MESSAGES_AND_NOTIFY = insertMessagesSql(false);

/**
 * INSERT_MESSAGES_AND_NOTIFY, but only when the active depth (the striped counter's sum, read by
 * this statement's own snapshot) is at most $5: the whole group fits under max_depth, or nothing
 * is written and no row returned. Sent after the admission lock's statement, whose wait ends
 * before this statement's snapshot is taken (docs/decisions.md D26).
 */
export const INSERT_MESSAGES_IF_ROOM = insertMessagesSql(true);

function insertMessagesSql(ifRoom: boolean): string {
  // MATERIALIZED: the blob is made once; as a plain subquery the planner folds it into the select
  // list and converts the whole blob again for every row.
  return `
WITH blob AS MATERIALIZED (SELECT coalesce(convert_to($2::text, 'UTF8'), $3::bytea) AS bytes),
inserted AS (
  INSERT INTO messages (id, route, target, state, received_at, next_run_at, attempt, payload, headers, trace)
  SELECT r.id, r.route, r.target, 'queued', r.received_at, r.next_run_at, 0, substring(p.bytes FROM r.at + 1 FOR r.len), r.headers, r.trace
  FROM json_to_recordset($1::text::json)
    AS r(id text, route text, target text, received_at int8, next_run_at int8, at int4, len int4, headers json, trace jsonb),
    blob AS p${
      ifRoom ? "\n  WHERE (SELECT coalesce(sum(active), 0) FROM queue_depth) <= $5::int8" : ""
    }
  RETURNING route
)
SELECT pg_notify($4, r.route) FROM (SELECT DISTINCT route FROM inserted) AS r`;
}

/**
 * One statement per lease operation ($1 ids, $2 now, $3 route scope or null): `change` (a DELETE
 * or UPDATE of messages m, joined with the lease ids as v) applies to the valid leases, settled ones
 * are remembered for idempotent repeats, and what changed is returned. The change locks and
 * rechecks each row itself (a concurrent settle of the same lease finds it changed and skips it),
 * so no separate SELECT … FOR UPDATE is needed: that cost a tuple lock (a WAL record) and a second
 * primary-key probe per lease. The leases are found by their unique lease id alone: `state || ''`
 * and `lease_until + 0` keep the planner from ANDing that with a scan of messages_lease_expiry
 * (`lease_until > now`) or messages_state_received (`state = 'leased'`), which it picks on stale
 * statistics and which walks the entry of every lease settled since the last VACUUM (1.2–2.6 ms
 * per ack after 30,000 acks).
 *
 * A settled lease is remembered by a plain INSERT: a lease id is settled once (the change clears or
 * deletes it, and a new lease draws a new random id), so settled_leases cannot already hold it but
 * by a collision of two random ids. `ON CONFLICT … DO UPDATE` paid for that case on every row (a
 * speculative insertion and its confirmation: 40% of the remembering, a quarter of an ack's
 * database time, docs/benchmarks.md); the statement that does is `upsertSettled`, which
 * LeaseOps runs again when the plain one fails on settled_leases_pkey (docs/decisions.md D78).
 */
export interface SettleStatement {
  /** The statement of the common path. */
  sql: string;
  /** The same statement remembering with ON CONFLICT … DO UPDATE (equal to `sql` where nothing is remembered). */
  upsertSettled: string;
}

export function settleLeasesSql(change: string, settleKind: SettleKind | null): SettleStatement {
  const text = (upsert: boolean) => `
WITH changed AS (
  ${change}
  WHERE m.lease_id = v.lease_id AND m.lease_id IS NOT NULL AND (m.state || '') = 'leased' AND (m.lease_until + 0) > $2 AND ($3::text IS NULL OR m.route = $3)
  RETURNING v.lease_id, m.route
)${
    settleKind
      ? `, remembered AS (
  INSERT INTO settled_leases (lease_id, kind, settled_at, route) SELECT lease_id, '${settleKind}', $2, route FROM changed${
    upsert ? "\n  ON CONFLICT (lease_id) DO UPDATE SET kind = excluded.kind, settled_at = excluded.settled_at, route = excluded.route" : ""
  }
)`
      : ""
  }
SELECT lease_id, route FROM changed`;
  return { sql: text(false), upsertSettled: text(settleKind !== null) };
}

/** The unique index a plain remembering INSERT fails on when settled_leases already holds the id. */
export const SETTLED_LEASES_KEY = "settled_leases_pkey";

/** The lease ids of a settle, as the relation v its change joins with. */
const LEASE_IDS = "unnest($1::text[]) AS v(lease_id)";

export const ACK_DELETE = settleLeasesSql(`DELETE FROM messages m USING ${LEASE_IDS}`, "ack");
export const ACK_DELIVER = settleLeasesSql(
  `UPDATE messages m SET state = 'delivered', lease_id = NULL, lease_until = NULL, next_run_at = $2 FROM ${LEASE_IDS}`,
  "ack",
);
/** $4: next_run_at. */
export const NACK_REQUEUE = settleLeasesSql(
  `UPDATE messages m SET state = 'queued', lease_id = NULL, lease_until = NULL, next_run_at = $4 FROM ${LEASE_IDS}`,
  "nack",
);
/** $4: dead_reason. */
export const NACK_DEAD = settleLeasesSql(
  `UPDATE messages m SET state = 'dead', lease_id = NULL, lease_until = NULL, next_run_at = $2, dead_reason = $4 FROM ${LEASE_IDS}`,
  "dead",
);
/** $4: now + ttl; never shortens. */
export const EXTEND = settleLeasesSql(
  `UPDATE messages m SET lease_until = greatest(m.lease_until, $4), next_run_at = greatest(m.lease_until, $4) FROM ${LEASE_IDS}`,
  null,
);

/** For leases the settle statement did not change: $1 ids, $2 oldest settled_at still remembered. */
export const CLASSIFY_LEASES = `
SELECT l.lease_id, s.kind, s.route AS settled_route, m.route, m.state, m.lease_until
FROM unnest($1::text[]) AS l(lease_id)
LEFT JOIN settled_leases s ON s.lease_id = l.lease_id AND s.settled_at > $2
LEFT JOIN messages m ON m.lease_id = l.lease_id AND m.lease_id IS NOT NULL`;

/** Which of the messages a group wrote are stored as it wrote them: $1 ids, $2 their received_at. */
export const STORED_AS_WRITTEN =
  "SELECT m.id FROM messages m JOIN unnest($1::text[], $2::bigint[]) AS w(id, received_at) ON m.id = w.id AND m.received_at = w.received_at";

export const MESSAGE_COLUMNS = "id, route, target, state, received_at, next_run_at, attempt, lease_id, lease_until, dead_reason";

/** Collects conditions with numbered placeholders. */
export class Where {
  readonly conditions: string[] = [];
  readonly params: unknown[] = [];

  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  add(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  selector(selector: Selector): this {
    if (selector.route !== undefined) {
      if (typeof selector.route === "string") this.add(`route = ${this.param(selector.route)}`);
      else this.add(`route = ANY(${this.param([...selector.route])}::text[])`);
    }
    if (selector.target !== undefined) this.add(`target = ${this.param(selector.target)}`);
    return this;
  }

  /** States are inlined (partial indexes need literal predicates), so only known names get through. */
  states(states: readonly string[]): this {
    for (const state of states) {
      if (!(MESSAGE_STATES as readonly string[]).includes(state)) throw new StoreError("invalid_argument", `unknown state ${state}`);
    }
    return this.add(`state IN (${states.map((s) => `'${s}'`).join(", ")})`);
  }

  sql(): string {
    return this.conditions.length ? `WHERE ${this.conditions.join(" AND ")}` : "";
  }
}
