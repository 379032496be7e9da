// The SQLite statements of the hot paths, prepared once per connection. Dynamic filters (lists,
// lifecycle filters) go through a small cache keyed by SQL text, so they are prepared once too.
import type Database from "better-sqlite3";
import { MESSAGE_STATES, StoreError } from "../store.js";
import type { SqliteDb } from "./open-db.js";

export const MESSAGE_COLUMNS = "id, route, target, state, received_at, next_run_at, attempt, lease_id, lease_until, dead_reason";

export interface MessageRow {
  id: string;
  route: string;
  target: string;
  state: string;
  received_at: number;
  next_run_at: number;
  attempt: number;
  lease_id: string | null;
  lease_until: number | null;
  dead_reason: string | null;
  payload?: Buffer;
  headers?: string;
  trace?: string | null;
}

export interface LeasedRow {
  id: string;
  lease_id: string;
  route: string;
  target: string;
  payload: Buffer;
  headers: string;
  trace: string | null;
  received_at: number;
  attempt: number;
}

export interface LeaseLookupRow {
  id: string;
  lease_id: string;
  route: string;
  state: string;
  lease_until: number;
}

export function prepareStatements(db: SqliteDb) {
  const readyIds = (byTarget: boolean) =>
    db.prepare(
      `SELECT id FROM messages INDEXED BY ${byTarget ? "messages_ready_target" : "messages_ready"}
       WHERE state = 'queued' AND route = @route ${byTarget ? "AND target = @target" : ""}
       AND next_run_at <= @now ORDER BY next_run_at, received_at, id LIMIT @batch`,
    ).pluck();
  return {
    // Transaction control of the group commit, prepared like everything else on the hot path.
    begin: db.prepare("BEGIN IMMEDIATE"),
    commit: db.prepare("COMMIT"),
    savepoint: db.prepare("SAVEPOINT grouped_write"),
    release: db.prepare("RELEASE grouped_write"),
    rollbackToSavepoint: db.prepare("ROLLBACK TO grouped_write"),
    activeDepth: db.prepare("SELECT active FROM queue_counters WHERE id = 1").pluck(),
    insert: db.prepare(
      `INSERT INTO messages (id, route, target, state, received_at, next_run_at, attempt, payload, headers, trace)
       VALUES (?, ?, ?, 'queued', ?, ?, 0, ?, ?, ?)`,
    ),
    expireLeases: db.prepare(
      "UPDATE messages INDEXED BY messages_lease_expiry SET state = 'queued', lease_id = NULL, lease_until = NULL WHERE state = 'leased' AND lease_until <= ?",
    ),
    readyIds: readyIds(false),
    readyIdsForTarget: readyIds(true),
    // Lease ids come from randomblob: `lease_` + 16 hex, like ids.ts, in one set-based statement.
    // The ids were selected as ready in the same transaction; looking them up by primary key (not
    // by state, which the planner would otherwise pick) keeps this O(batch) at any depth.
    leaseIds: db.prepare<[number, number, string]>(
      `UPDATE messages SET state = 'leased', attempt = attempt + 1,
         lease_id = 'lease_' || lower(hex(randomblob(8))), lease_until = ?, next_run_at = ?
       WHERE id IN (SELECT value FROM json_each(?))
       RETURNING id, lease_id, route, target, payload, headers, trace, received_at, attempt`,
    ),
    lookupLeases: db.prepare<[string]>(
      `SELECT id, lease_id, route, state, lease_until FROM messages
       WHERE lease_id IN (SELECT value FROM json_each(?))`,
    ),
    // The hot ack path: one statement deletes the valid leases and names them; only leftovers are
    // looked up to tell expired from unknown.
    ackDelete: db.prepare<[string, number, string | null, string | null]>(
      `DELETE FROM messages WHERE lease_id IN (SELECT value FROM json_each(?)) AND state = 'leased' AND lease_until > ?
         AND (? IS NULL OR route = ?) RETURNING lease_id`,
    ).pluck(),
    deleteByIds: db.prepare<[string]>("DELETE FROM messages WHERE id IN (SELECT value FROM json_each(?))"),
    deliverByIds: db.prepare<[number, string]>(
      `UPDATE messages SET state = 'delivered', lease_id = NULL, lease_until = NULL, next_run_at = ?
       WHERE id IN (SELECT value FROM json_each(?))`,
    ),
    requeueLeased: db.prepare<[number, string]>(
      `UPDATE messages SET state = 'queued', lease_id = NULL, lease_until = NULL, next_run_at = ?
       WHERE id IN (SELECT value FROM json_each(?))`,
    ),
    killLeased: db.prepare<[number, string | null, string]>(
      `UPDATE messages SET state = 'dead', lease_id = NULL, lease_until = NULL, next_run_at = ?, dead_reason = ?
       WHERE id IN (SELECT value FROM json_each(?))`,
    ),
    extendLeases: db.prepare<[number, number, string]>(
      `UPDATE messages SET lease_until = max(lease_until, ?), next_run_at = max(lease_until, ?)
       WHERE id IN (SELECT value FROM json_each(?))`,
    ),
    insertAttempt: db.prepare(
      `INSERT INTO attempts (id, message_id, route, target, attempt, status_code, error, outcome, dead_reason, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    countByState: db.prepare("SELECT state, count(*) AS n FROM messages GROUP BY state"),
    queuedBuckets: db.prepare(
      `SELECT route, target, count(*) AS queued, min(received_at) AS oldest, min(next_run_at) AS earliest
       FROM messages WHERE state = 'queued' GROUP BY route, target`,
    ),
    // Only leased rows are visited: the lease-expiry index is partial on state = 'leased'.
    leasedByRoute: db.prepare("SELECT route, count(*) AS n FROM messages INDEXED BY messages_lease_expiry WHERE state = 'leased' GROUP BY route"),
    insertTrendSample: db.prepare(
      "INSERT INTO trend_samples (captured_at, route, target, queued, leased, dead) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    trendCounts: db.prepare(
      `SELECT route, target, sum(state = 'queued') AS queued, sum(state = 'leased') AS leased, sum(state = 'dead') AS dead
       FROM messages WHERE state IN ('queued', 'leased', 'dead') GROUP BY route, target`,
    ),
    trendSamples: db.prepare(
      "SELECT captured_at, route, target, queued, leased, dead FROM trend_samples WHERE captured_at >= ? AND captured_at < ?",
    ),
  };
}

export type SqliteStatements = ReturnType<typeof prepareStatements>;

/** Prepares dynamic statements once per distinct SQL text. */
export class StatementCache {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly db: SqliteDb) {}

  get(sql: string): Database.Statement {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement;
  }
}

/** WHERE fragments for the common selectors; `?` placeholders in the order of `params`. */
export function selectorWhere(selector: { route?: string | readonly string[]; target?: string }, conditions: string[], params: unknown[]): void {
  if (selector.route !== undefined) {
    if (typeof selector.route === "string") {
      conditions.push("route = ?");
      params.push(selector.route);
    } else {
      conditions.push("route IN (SELECT value FROM json_each(?))");
      params.push(JSON.stringify(selector.route));
    }
  }
  if (selector.target !== undefined) {
    conditions.push("target = ?");
    params.push(selector.target);
  }
}

/** States are inlined (partial indexes need literal predicates), so only known names get through. */
/**
 * `byIdList`: the rows are already named by id, so the state test must not steer the planner onto
 * a state index (a unary + keeps SQLite from using an index for that term).
 */
export function statesWhere(states: readonly string[], conditions: string[], byIdList = false): void {
  for (const state of states) {
    if (!(MESSAGE_STATES as readonly string[]).includes(state)) throw new StoreError("invalid_argument", `unknown state ${state}`);
  }
  conditions.push(`${byIdList ? "+" : ""}state IN (${states.map((s) => `'${s}'`).join(", ")})`);
}
