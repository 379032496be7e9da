// The worker service's contract, proto/spool/worker/v1/worker.proto, loaded at run time with
// @grpc/proto-loader. The file ships in the package beside dist/ and is found relative to this
// module (dist/runtime/grpc/ → proto/), so the built `spool` finds it wherever it is installed.
import { fileURLToPath } from "node:url";
import { loadPackageDefinition, type ServiceDefinition } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";

/** The .proto file, from the repository root (two folders up from runtime/grpc/, three from dist/runtime/grpc/). */
export const WORKER_PROTO_PATH = fileURLToPath(new URL("../../../proto/spool/worker/v1/worker.proto", import.meta.url));

/** The full service name: method paths are `/spool.worker.v1.WorkerService/<Rpc>`. */
export const WORKER_SERVICE_NAME = "spool.worker.v1.WorkerService";

/**
 * How messages map to JavaScript: field names as the .proto writes them (snake_case), int64 as
 * numbers, unset scalars as their zero values and unset message fields (durations) as null, so
 * "not sent" and "0s" stay apart.
 */
export const PROTO_LOADER_OPTIONS = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: false } as const;

let cached: ServiceDefinition | undefined;

/** The WorkerService definition (read once per process). */
export function workerServiceDefinition(): ServiceDefinition {
  if (!cached) {
    const pkg = loadPackageDefinition(loadSync(WORKER_PROTO_PATH, PROTO_LOADER_OPTIONS)) as unknown as {
      spool: { worker: { v1: { WorkerService: { service: ServiceDefinition } } } };
    };
    cached = pkg.spool.worker.v1.WorkerService.service;
  }
  return cached;
}
