// A WAL sync (runtime/store/sqlite/wal-flush.ts WalSync) that the test completes by hand, counting
// the fsyncs asked for: lets a test see who is answered before and after the flush.
import type { WalSync } from "../../runtime/store/sqlite/wal-flush.js";

export function heldSync(): { sync: WalSync; started: () => number; finish: (error?: NodeJS.ErrnoException) => void } {
  const held: ((error: NodeJS.ErrnoException | null) => void)[] = [];
  let started = 0;
  return {
    sync: (_fd, done) => {
      started++;
      held.push(done);
    },
    started: () => started,
    finish: (error) => held.shift()!(error ?? null),
  };
}
