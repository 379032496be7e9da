// The SQLite statements of the hot paths, prepared once per connection. Dynamic filters (lists,
// lifecycle filters) go through a small cache keyed by SQL text, so they are prepared once too.
import type Database from "better-sqlite3";
import { MESSAGE_STATES } from "../records.js";
import { StoreError } from "../store.js";
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

/** A ready row as the ready index holds it: [rowid, id, next_run_at, received_at] (`.raw()`). */
export type ReadyKey = [rowid: number, id: string, nextRunAt: number, receivedAt: number];

/** A leased row as leasedRows reads it: [rowid, lease_id, payload, headers, trace, attempt, id, received_at] (`.raw()`). */
export type LeasedRow = [rowid: number, leaseId: string, payload: Buffer, headers: string, trace: string | null, attempt: number, id: string, receivedAt: number];

export interface LeaseLookupRow {
  rowid: number;
  lease_id: string;
  route: string;
  state: string;
  lease_until: number;
}

/**
 * A lease id is `lease_` + 16 random hex + `_` + the row's rowid (decimal), made by the lease UPDATE.
 * The rowid finds the row without an index on lease_id; comparing the whole id with the stored
 * lease_id then makes a stale or forged id match nothing (a rowid reused after a delete, or changed
 * by an outside VACUUM, holds a different lease_id). `lease_ids` is the JSON array of ids asked
 * about, bound once; ids issued before migration 2 carry no rowid and are found through lease_v1.
 */
const LEASE_ID_SQL = "'lease_' || lower(hex(randomblob(8))) || '_' || rowid";
const WITH_LEASE_IDS = "WITH lease_ids(v) AS (SELECT value FROM json_each(?))";
// Only a v1-shaped id (22 characters) probes lease_v1: a UNION with lease_v1 probed it for every id,
// ~3% of a lease+ack's instructions.
const BY_LEASE_ID = `rowid IN (SELECT CASE WHEN length(v) = 22 THEN (SELECT message_rowid FROM lease_v1 WHERE lease_id = v)
    ELSE CAST(substr(v, 24) AS INTEGER) END FROM lease_ids)
  AND lease_id IN (SELECT v FROM lease_ids)`;

export function prepareStatements(db: SqliteDb) {
  return {
    // Transaction control of the group commit, prepared like everything else on the hot path.
    begin: db.prepare("BEGIN IMMEDIATE"),
    commit: db.prepare("COMMIT"),
    savepoint: db.prepare("SAVEPOINT grouped_write"),
    release: db.prepare("RELEASE grouped_write"),
    rollbackToSavepoint: db.prepare("ROLLBACK TO grouped_write"),
    activeDepth: db.prepare("SELECT active FROM queue_counters WHERE id = 1").pluck(),
    // Once per group, for the messages its enqueues inserted (connection.ts insertedInGroup).
    addActive: db.prepare<[number]>("UPDATE queue_counters SET active = active + ? WHERE id = 1"),
    insert: db.prepare(
      `INSERT INTO messages (id, route, target, state, received_at, next_run_at, attempt, payload, headers, trace)
       VALUES (?, ?, ?, 'queued', ?, ?, 0, ?, ?, ?)`,
    ),
    expireLeases: db.prepare(
      // lease_id stays until the row is leased again or settled: a late ack then finds it and is told
      // lease_expired rather than lease_not_found, whenever the sweep ran.
      "UPDATE messages INDEXED BY messages_lease_expiry SET state = 'queued', lease_until = NULL WHERE state = 'leased' AND lease_until <= ?",
    ),
    // The targets of a route that have queued rows, by a skip-scan of the ready index: each step
    // seeks the next target after the previous one, so this costs one seek per target at any depth.
    readyTargets: db.prepare<{ route: string }>(
      `WITH RECURSIVE targets(target) AS (
         SELECT (SELECT target FROM messages INDEXED BY messages_ready_target
                 WHERE state = 'queued' AND route = @route ORDER BY target LIMIT 1)
         UNION ALL
         SELECT (SELECT target FROM messages INDEXED BY messages_ready_target
                 WHERE state = 'queued' AND route = @route AND target > targets.target ORDER BY target LIMIT 1)
         FROM targets WHERE targets.target IS NOT NULL)
       SELECT target FROM targets WHERE target IS NOT NULL`,
    ).pluck(),
    // The next ready rows of one route+target in dequeue order, read from the index alone.
    readyKeys: db.prepare<{ route: string; target: string; now: number; batch: number }>(
      `SELECT rowid, id, next_run_at, received_at FROM messages INDEXED BY messages_ready_target
       WHERE state = 'queued' AND route = @route AND target = @target AND next_run_at <= @now
       ORDER BY next_run_at, received_at, id LIMIT @batch`,
    ).raw(),
    // readyKeys' rowids alone, for a route with one target (nothing to merge): about half its cost,
    // the id and received_at being read with the leased row anyway.
    readyRowids: db.prepare<{ route: string; target: string; now: number; batch: number }>(
      `SELECT rowid FROM messages INDEXED BY messages_ready_target
       WHERE state = 'queued' AND route = @route AND target = @target AND next_run_at <= @now
       ORDER BY next_run_at, received_at, id LIMIT @batch`,
    ).pluck(),
    // Leases rows chosen as ready in the same transaction, by rowid (O(batch) at any depth); then
    // leasedRows reads what the ready index lacks. Not one UPDATE … RETURNING: SQLite gathers every
    // returned row into an ephemeral table before handing out the first, a copy of each ~1 KB payload
    // that the separate SELECT, reading the pages the UPDATE just wrote, does not make (1–2 µs per
    // message measured). Raw rows are cheaper to build than objects.
    leaseByRowid: db.prepare<[number, number, string]>(
      `UPDATE messages SET state = 'leased', attempt = attempt + 1, lease_id = ${LEASE_ID_SQL}, lease_until = ?, next_run_at = ?
       WHERE rowid IN (SELECT value FROM json_each(?))`,
    ),
    leasedRows: db.prepare<[string]>(
      `SELECT rowid, lease_id, payload, headers, trace, attempt, id, received_at FROM messages WHERE rowid IN (SELECT value FROM json_each(?))`,
    ).raw(),
    lookupLeases: db.prepare<[string]>(
      `${WITH_LEASE_IDS} SELECT rowid, lease_id, route, state, lease_until FROM messages WHERE ${BY_LEASE_ID}`,
    ),
    // The hot ack path: one statement deletes the valid leases and names them; only leftovers are
    // looked up to tell expired from unknown. (+lease_until keeps the planner on the rowids.)
    ackDelete: db.prepare<[string, number, string | null, string | null]>(
      `${WITH_LEASE_IDS} DELETE FROM messages WHERE ${BY_LEASE_ID}
         AND state = 'leased' AND +lease_until > ? AND (? IS NULL OR route = ?) RETURNING lease_id`,
    ).pluck(),
    // The settle statements take the rowids of leases already looked up in the same transaction.
    deliverByIds: db.prepare<[number, string]>(
      `UPDATE messages SET state = 'delivered', lease_id = NULL, lease_until = NULL, next_run_at = ?
       WHERE rowid IN (SELECT value FROM json_each(?))`,
    ),
    requeueLeased: db.prepare<[number, string]>(
      `UPDATE messages SET state = 'queued', lease_id = NULL, lease_until = NULL, next_run_at = ?
       WHERE rowid IN (SELECT value FROM json_each(?))`,
    ),
    killLeased: db.prepare<[number, string | null, string]>(
      `UPDATE messages SET state = 'dead', lease_id = NULL, lease_until = NULL, next_run_at = ?, dead_reason = ?
       WHERE rowid IN (SELECT value FROM json_each(?))`,
    ),
    extendLeases: db.prepare<[number, number, string]>(
      `UPDATE messages SET lease_until = max(lease_until, ?), next_run_at = max(lease_until, ?)
       WHERE rowid IN (SELECT value FROM json_each(?))`,
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
