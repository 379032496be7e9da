// Background WAL checkpoints. Left to SQLite, a checkpoint runs inside the commit that crosses
// wal_autocheckpoint and copies the whole WAL into the database file on the event loop: about 80 ms
// for a 40 MB WAL here, a stall every request in flight waits for. A worker thread with its own
// connection copies frames every `intervalMs` instead (PASSIVE: never blocks the writer), so when
// the writer's automatic checkpoint comes due only the last few frames are left to copy, and the WAL
// can restart from its beginning. If the worker fails, the automatic checkpoint does all the work,
// as before.
import { Worker } from "node:worker_threads";
import type { StoreObserver } from "../observer.js";
import type { CheckpointReport, CheckpointWorkerData } from "./checkpoint-worker.js";

export const CHECKPOINT_INTERVAL_MS = 200;

export class BackgroundCheckpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  constructor(path: string, observer: StoreObserver, intervalMs = CHECKPOINT_INTERVAL_MS) {
    this.worker = new Worker(new URL("./checkpoint-worker.js", import.meta.url), {
      workerData: { path, intervalMs } satisfies CheckpointWorkerData,
    });
    this.worker.on("message", (report: CheckpointReport) => {
      if (report.kind === "checkpoint") observer.sqliteEvent("checkpoint", report.seconds);
      else observer.sqliteEvent("checkpoint_error");
    });
    this.worker.on("error", () => observer.sqliteEvent("checkpoint_error"));
    this.exited = new Promise((resolve) => this.worker.once("exit", () => resolve()));
    // After the listeners, which would otherwise hold the process open: a store never closed must not.
    this.worker.unref();
  }

  /** Stops the worker after its current checkpoint; the database stays consistent either way. */
  async stop(): Promise<void> {
    this.worker.postMessage("stop");
    const timeout = setTimeout(() => void this.worker.terminate(), 2000);
    await this.exited;
    clearTimeout(timeout);
  }
}
