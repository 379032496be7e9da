// spool/client: the worker library for Spool's Pull API (docs/workers.md). `createWorker` runs a
// handler over one pull endpoint; `PullClient` is the Pull API as typed calls. It imports nothing
// of the server: only undici and Node.
export { createWorker } from "./worker.js";
export { LeaseLostError, WorkerStoppedError } from "./worker-api.js";
export type { Handler, Worker, WorkerEvent, WorkerEventType, WorkerOptions } from "./worker-api.js";
export { PullClient } from "./pull-client.js";
export type { DequeueOptions, LeaseConflict, NackOptions, PullClientOptions, SettleResult, StreamOptions } from "./pull-client.js";
export { PullError } from "./errors.js";
export type { Message } from "./message.js";
