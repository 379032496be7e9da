// What the parts of the PostgreSQL store share: the pool, the clock, the limits, the in-process
// wake-up signal and the NOTIFY channel through which other instances hear about ready messages.
import type { Clock } from "../../time/clock.js";
import type { StoreLimits } from "../options.js";
import type { ReadySignal } from "../ready-signal.js";
import type { Sql } from "./connect.js";

/** A result row as the driver returns it (columns by name). */
export type Row = Record<string, any>;

export interface PgContext {
  readonly sql: Sql;
  /** Sessions with synchronous_commit=off, for ack, nack and attempt records (connect.ts). */
  readonly deferredSql: Sql;
  readonly clock: Clock;
  readonly limits: StoreLimits;
  readonly ready: ReadySignal;
  /** The NOTIFY channel of this schema; its payload is the route that may have ready messages. */
  readonly channel: string;
  /** Returns leases past lease_until to queued; reads call it so they never show a stale lease. */
  expireLeases(nowMs?: number): Promise<void>;
}

/** NOTIFY channel names are identifiers: at most 63 bytes, compared in lower case. */
export function readyChannel(schema: string): string {
  return ("spool_ready_" + schema).toLowerCase().slice(0, 63);
}

/** Wakes long polls on these routes: at once on this instance, through NOTIFY on the others. */
export async function announceReady(cx: PgContext, routes: Iterable<string>): Promise<void> {
  const unique = [...new Set(routes)];
  if (unique.length === 0) return;
  for (const route of unique) cx.ready.notify(route);
  await cx.sql`SELECT pg_notify(${cx.channel}, r) FROM unnest(${unique}::text[]) AS r`;
}
