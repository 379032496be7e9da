// The background checkpointer's thread (checkpointer.ts): its own connection to the database file,
// copying committed WAL frames into the database with PASSIVE checkpoints, which never block the
// writer. It reports each checkpoint that copied frames, and stops when told to.
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";

export interface CheckpointWorkerData {
  path: string;
  intervalMs: number;
}

export type CheckpointReport = { kind: "checkpoint"; seconds: number; frames: number } | { kind: "error"; message: string };

const { path, intervalMs } = workerData as CheckpointWorkerData;
const port = parentPort!;
const db = new Database(path, { fileMustExist: true });
// FULL: the WAL is synced before frames are copied and the database file after, as on the writer.
db.pragma("synchronous = FULL");
let copied = 0;

const timer = setInterval(() => {
  const started = performance.now();
  try {
    const [result] = db.pragma("wal_checkpoint(PASSIVE)") as { busy: number; log: number; checkpointed: number }[];
    // The WAL restarted since the last run: its frame numbers start again from zero.
    if (result.checkpointed < copied) copied = 0;
    if (result.checkpointed > copied) {
      port.postMessage({ kind: "checkpoint", seconds: (performance.now() - started) / 1000, frames: result.checkpointed - copied } satisfies CheckpointReport);
    }
    copied = result.checkpointed;
  } catch (error) {
    port.postMessage({ kind: "error", message: error instanceof Error ? error.message : String(error) } satisfies CheckpointReport);
  }
}, intervalMs);

port.on("message", (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  db.close();
  port.close();
});
