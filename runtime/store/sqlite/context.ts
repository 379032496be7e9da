// What the parts of the SQLite store share: the connection (with its prepared statements and group
// commit), the clock, the limits, the wake-up signal and the observer.
import type { Clock } from "../../time/clock.js";
import type { StoreObserver } from "../observer.js";
import type { StoreLimits } from "../options.js";
import type { ReadySignal } from "../ready-signal.js";
import type { SqliteConnection } from "./connection.js";
import type { SqliteStatements } from "./queries.js";

export interface SqliteContext {
  readonly conn: SqliteConnection;
  /** The connection's statements prepared once (conn.sql). */
  readonly sql: SqliteStatements;
  readonly clock: Clock;
  readonly limits: StoreLimits;
  readonly ready: ReadySignal;
  readonly observer: StoreObserver;
}
