// The gRPC statuses no healthy server gives: a store that cannot answer (UNAVAILABLE, as the HTTP
// Pull API answers 503 queue_overload) in-process over a real connection and a real SQLite store
// whose calls are made to fail; and the mapping of every catalogue status to its gRPC code,
// anything unexpected being INTERNAL with nothing of its message.
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { apiError, ERROR_STATUS, type ErrorCode } from "../../runtime/errors.js";
import { createApp } from "../../runtime/app/app.js";
import { WORKER_PROTO_PATH, workerServiceDefinition } from "../../runtime/grpc/proto.js";
import { grpcCodeOf, grpcError } from "../../runtime/grpc/status.js";
import { openStore, type StoreDeps, type StoreSpec } from "../../runtime/store/open.js";
import { StoreError, type Store } from "../../runtime/store/store.js";
import { repoPath } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { buildConfig, listenAt, pullRoute } from "../app/helpers/ir.js";
import { isFailure, workerClient } from "./helpers/client.js";

const temp = makeTempDir("grpc-status");
const test = suite("gRPC worker service: status mapping and store failures");

test.after(() => temp.cleanup());

test("the built module loads the committed .proto beside dist/, with the contract's method paths", () => {
  assert.is(WORKER_PROTO_PATH, repoPath("proto/spool/worker/v1/worker.proto"));
  const methods = Object.values(workerServiceDefinition()).map((method) => method.path);
  assert.equal(methods.sort(), ["Ack", "Dequeue", "Extend", "Nack"].map((rpc) => `/spool.worker.v1.WorkerService/${rpc}`));
});

test("every catalogue status maps to the gRPC code of the contract's table; anything else is INTERNAL", () => {
  const expected: Partial<Record<ErrorCode, status>> = {
    unauthorized: status.UNAUTHENTICATED,
    forbidden: status.PERMISSION_DENIED,
    invalid_body: status.INVALID_ARGUMENT,
    not_found: status.NOT_FOUND,
    lease_conflict: status.FAILED_PRECONDITION,
    rate_limited: status.RESOURCE_EXHAUSTED,
    queue_overload: status.UNAVAILABLE,
    internal_error: status.INTERNAL,
  };
  for (const [code, grpcCode] of Object.entries(expected)) assert.is(grpcCodeOf(apiError(code as ErrorCode, "x")), grpcCode, code);
  for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) {
    const httpStatus = ERROR_STATUS[code];
    if (![400, 401, 403, 404, 409, 429, 503].includes(httpStatus)) assert.is(grpcCodeOf(apiError(code, "x")), status.INTERNAL, code);
  }
  const unexpected = grpcError(new Error("SELECT secret FROM somewhere failed"));
  assert.equal([unexpected.code, unexpected.details], [status.INTERNAL, "internal error"]);
  assert.equal(unexpected.metadata!.get("spool-error-code"), ["internal_error"]);
});

test("a store that cannot answer is UNAVAILABLE (queue_overload) on every RPC, counted as 5xx", async () => {
  let failing = false;
  const fail = (store: Store): Store =>
    new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => (failing && ["dequeue", "ack", "nack", "extend"].includes(String(name)) ? Promise.reject(new StoreError("unavailable", "disk gone")) : value.apply(target, args));
      },
    });
  const config = buildConfig({
    routes: [pullRoute("/hooks/a", "/a")],
    patch: (c) => {
      c.pullApi = { ...c.pullApi, grpcListen: listenAt("127.0.0.1", 0) };
      c.observability = { ...c.observability, metrics: { ...c.observability.metrics, enabled: true } };
    },
  });
  const app = createApp(config, {
    version: "0.1.0",
    storeLocation: { sqlitePath: join(temp.path, "failing.sqlite") },
    openStore: async (spec: StoreSpec, deps: StoreDeps) => fail(await openStore(spec, deps)),
  });
  const { addresses } = await app.start();
  const at = (name: string) => addresses.find((a) => a.name === name)!;
  const worker = workerClient(`127.0.0.1:${at("grpc").port}`, "pull-token");
  try {
    assert.equal(await worker.call("Dequeue", { endpoint: "/a" }), { items: [] });
    failing = true;
    for (const [rpc, request] of [
      ["Dequeue", { endpoint: "/a" }],
      ["Ack", { endpoint: "/a", lease_id: "x" }],
      ["Ack", { endpoint: "/a", lease_ids: ["x", "y"] }],
      ["Nack", { endpoint: "/a", lease_id: "x" }],
      ["Extend", { endpoint: "/a", lease_id: "x" }],
    ] as const) {
      const reply = await worker.call(rpc, request);
      assert.ok(isFailure(reply), `${rpc}: ${JSON.stringify(reply)}`);
      assert.equal([reply.code, reply.details, reply.metadata.get("spool-error-code")], [status.UNAVAILABLE, "the queue store is unavailable", ["queue_overload"]], rpc);
    }
    const text = await (await fetch(`http://127.0.0.1:${at("metrics").port}/metrics`)).text();
    assert.match(text, /^spool_pull_dequeue_total\{route="\/hooks\/a",status="5xx"\} 1$/m);
  } finally {
    worker.close();
    await app.stop();
  }
});

test.run();
