// What the parts of the memory store share: the table, the clock, the limits and the wake-up signal.
import type { Clock } from "../../time/clock.js";
import type { StoreLimits } from "../options.js";
import type { ReadySignal } from "../ready-signal.js";
import type { MessageTable } from "./table.js";

export interface MemoryContext {
  readonly table: MessageTable;
  readonly clock: Clock;
  readonly limits: StoreLimits;
  readonly ready: ReadySignal;
}
