// A worker's view of the gRPC worker service for tests and benchmarks: a grpc-js client built from
// the committed .proto file (as any client would build it), each RPC as a promise that resolves
// with the response or with the call's error (code, details, trailer metadata).
import { credentials as channelCredentials, loadPackageDefinition, Metadata, type ChannelCredentials, type Client, type ServiceError } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { repoPath } from "../../helpers/repo.js";

const definition = loadSync(repoPath("proto/spool/worker/v1/worker.proto"), { keepCase: true, longs: Number, defaults: true });
const WorkerService = (loadPackageDefinition(definition) as any).spool.worker.v1.WorkerService as new (address: string, credentials: ChannelCredentials, options?: object) => Client;

export type Rpc = "Dequeue" | "Ack" | "Nack" | "Extend";

export interface Failure {
  code: number;
  details: string;
  metadata: Metadata;
}

export interface WorkerClient {
  /** Resolves with the response, or with the Failure of a call that ended in an error status. */
  call(rpc: Rpc, request: object, options?: { token?: string | null; authorization?: string; deadlineMs?: number; signal?: AbortSignal }): Promise<any>;
  close(): void;
}

export function isFailure(value: unknown): value is Failure {
  return typeof value === "object" && value !== null && "code" in value && "details" in value && "metadata" in value;
}

/** A client of `address` (host:port) sending `defaultToken` as its bearer token unless a call says otherwise. */
export function workerClient(address: string, defaultToken: string, credentials: ChannelCredentials = channelCredentials.createInsecure(), options: object = {}): WorkerClient {
  const client = new WorkerService(address, credentials, { "grpc.max_receive_message_length": 64 * 1024 * 1024, ...options }) as any;
  return {
    call(rpc, request, callOptions = {}) {
      const metadata = new Metadata();
      const token = callOptions.token === undefined ? defaultToken : callOptions.token;
      if (callOptions.authorization !== undefined) metadata.set("authorization", callOptions.authorization);
      else if (token !== null) metadata.set("authorization", `Bearer ${token}`);
      return new Promise((resolve) => {
        const deadline = callOptions.deadlineMs === undefined ? undefined : Date.now() + callOptions.deadlineMs;
        const call = client[rpc](request, metadata, deadline === undefined ? {} : { deadline }, (error: ServiceError | null, response: unknown) => {
          resolve(error ? { code: error.code, details: error.details, metadata: error.metadata } : response);
        });
        callOptions.signal?.addEventListener("abort", () => call.cancel(), { once: true });
      });
    },
    close: () => client.close(),
  };
}
