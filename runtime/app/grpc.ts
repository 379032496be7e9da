// The gRPC worker service (`pull_api { grpc_listen }`, docs/grpc.md) as one of the app's services:
// started after the HTTP listeners, its certificate files read again on reload like theirs, stopped
// with the others. Wiring only: the binding is runtime/grpc/, the operations and the access checks
// are the Pull API's (runtime/pull/ops.ts, access.ts), shared with the HTTP binding.
import { status } from "@grpc/grpc-js";
import type { SpoolConfig } from "../../compiler/ir.js";
import type { BoundAddress } from "./types.js";
import { listenWorkerService, type WorkerListener } from "../grpc/listener.js";
import { WORKER_SERVICE_NAME } from "../grpc/proto.js";
import type { WorkerPull } from "../grpc/port.js";
import { workerServiceHandlers } from "../grpc/service.js";
import { loadListenerTls } from "../http/tls.js";
import type { AccessLogger } from "../observability/access-log.js";
import { admitCaller, authenticate, type PullCaller } from "../pull/access.js";
import type { PullOps } from "../pull/ops.js";
import type { PullState } from "../pull/state.js";
import type { LiveState } from "./live.js";
import type { AppContext, AppService } from "./types.js";

/**
 * The service, or undefined when grpc_listen is off; `address()` is the bound address once started.
 * `accessLog` is read per call (the app opens it after building its services' wiring).
 */
export function grpcWorkerService(context: AppContext, live: LiveState, ops: PullOps, accessLog: () => AccessLogger | undefined): (AppService & { address(): BoundAddress | undefined }) | undefined {
  const config = context.config();
  const listen = config.pullApi.grpcListen;
  if (listen === null) return undefined;
  const logger = context.logger.child({ component: "grpc" });
  const tlsOf = (c: SpoolConfig) => (c.pullApi.tls ? loadListenerTls(c.pullApi.tls, "pull_api grpc_listen") : null);
  let listener: WorkerListener | undefined;
  return {
    name: "grpc",
    async start() {
      listener = await listenWorkerService({
        bind: { host: listen.host === "" ? undefined : listen.host, port: listen.port },
        tls: tlsOf(config),
        handlers: workerServiceHandlers({
          pull: workerPull(live, ops),
          metrics: context.metrics,
          shutdownSignal: context.shutdownSignal,
          onUnexpectedError: (rpc, error) => logger.error("grpc_call_failed", { rpc, error }),
          onAnswered: (call) =>
            accessLog()?.write({
              time: new Date(context.clock.now()).toISOString(),
              listener: "grpc",
              method: "POST",
              path: `/${WORKER_SERVICE_NAME}/${call.rpc}`,
              status: status[call.code],
              duration_ms: Math.round(call.durationMs * 1000) / 1000,
              remote: call.remote,
            }),
        }),
      });
    },
    reconfigure(next) {
      // grpc_listen and tls are restart-only (runtime/reload/policy.ts); the certificate files are
      // read again, as the HTTP listeners read theirs.
      if (!listener || !next.pullApi.tls) return;
      try {
        listener.refreshTls(tlsOf(next)!);
      } catch (error) {
        logger.warn("tls_reload_failed", { listener: "grpc", error, detail: "the certificate read at the last start or reload is still served" });
      }
    },
    stop: async (drainMs) => {
      await listener?.close(drainMs);
    },
    address: () => (listener ? { name: "grpc", host: listener.address.host, port: listener.address.port } : undefined),
  };
}

/** The Pull API as the worker service's port: one config generation per call's checks. */
function workerPull(live: LiveState, ops: PullOps): WorkerPull<{ state: PullState; caller: PullCaller }> {
  return {
    authenticate(token) {
      const state = live.current().pull;
      return { state, caller: authenticate(state, token) };
    },
    admit: ({ state, caller }, endpoint, onRoute) => admitCaller(state, live.pullRateLimits, caller, endpoint, onRoute).route.path,
    dequeue: ops.dequeue,
    release: ops.release,
    ack: ops.ack,
    nack: ops.nack,
    extend: ops.extend,
  };
}
