// The worker service's own listener (`pull_api { grpc_listen }`): a TCP server, or a TLS server
// with `pull_api { tls }` and its client-certificate policy (runtime/http/tls.ts, the rules every
// HTTPS listener applies), whose connections are handed to a grpc-js server as HTTP/2. Without TLS
// the service speaks cleartext HTTP/2 with prior knowledge (h2c).
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import { Server, ServerCredentials, type UntypedServiceImplementation } from "@grpc/grpc-js";
import type { BindAddress } from "../http/address.js";
import type { ListenerTls } from "../http/tls.js";
import { workerServiceDefinition } from "./proto.js";

/** A request message (all are small: ids and durations) larger than this is refused, as the HTTP Pull API refuses bodies over 1 MiB. */
const MAX_REQUEST_BYTES = 1024 * 1024;

/** Longer than any long poll a client would hold open between calls. */
const MAX_CONNECTION_IDLE_MS = 5 * 60_000;

export interface WorkerListener {
  readonly address: { host: string; port: number };
  /** Serves a renewed certificate to new connections (a TLS listener only). */
  refreshTls(next: ListenerTls): void;
  /** Stops accepting, lets calls in flight finish up to `deadlineMs`, then closes every connection. */
  close(deadlineMs: number): Promise<void>;
}

export interface WorkerListenerOptions {
  readonly bind: BindAddress;
  /** null: h2c. */
  readonly tls: ListenerTls | null;
  readonly handlers: UntypedServiceImplementation;
}

export async function listenWorkerService(options: WorkerListenerOptions): Promise<WorkerListener> {
  const grpc = new Server({
    "grpc.max_receive_message_length": MAX_REQUEST_BYTES,
    // A connection with no call for this long is closed with GOAWAY (a client reconnects when it
    // next calls), so abandoned or silent connections do not hold sockets forever.
    "grpc.max_connection_idle_ms": MAX_CONNECTION_IDLE_MS,
  });
  grpc.addService(workerServiceDefinition(), options.handlers);
  // The connections arrive already decrypted (TLS is ours, below): grpc-js sees plain HTTP/2.
  const injector = grpc.createConnectionInjector(ServerCredentials.createInsecure());
  const sockets = new Set<Socket>();
  const accept = (socket: Socket) => {
    // Small frames go out at once: with Nagle's algorithm a reply waits for the client's delayed ACK (~40 ms).
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    injector.injectConnection(socket);
  };
  let tls = options.tls;
  let tcp: TcpServer;
  let refreshTls = (_next: ListenerTls): void => {
    throw new Error("not a TLS listener");
  };
  if (tls) {
    const server = createTlsServer({ ...tls.options, ALPNProtocols: ["h2"] });
    refreshTls = (next) => {
      server.setSecureContext(next.options);
      tls = next;
    };
    // A client the policy refuses (client_auth require_any, verify_if_given) is closed before any HTTP/2.
    server.on("secureConnection", (socket: TLSSocket) => (tls!.admits(socket) ? accept(socket) : socket.destroy()));
    server.on("tlsClientError", (_error: Error, socket: TLSSocket) => socket.destroy());
    tcp = server;
  } else {
    tcp = createTcpServer(accept);
  }
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => reject(new Error(`pull_api grpc_listen cannot listen: ${error.message}`, { cause: error }));
    tcp.once("error", onError);
    tcp.listen({ host: options.bind.host, port: options.bind.port }, () => {
      tcp.off("error", onError);
      resolve();
    });
  });
  const bound = tcp.address();
  if (bound === null || typeof bound === "string") throw new Error("grpc_listen is not bound to a TCP address");

  let closing: Promise<void> | undefined;
  return {
    address: { host: bound.address, port: bound.port },
    refreshTls,
    close(deadlineMs) {
      closing ??= (async () => {
        tcp.close();
        // GOAWAY to every client, then wait for the calls in flight (open long polls answer at once:
        // the app's shutdown signal ended them). grpc-js's own drain() would stop tryShutdown from
        // waiting for those calls, so it is not used.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => grpc.tryShutdown(() => resolve())),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, deadlineMs))),
        ]);
        clearTimeout(timer);
        grpc.forceShutdown();
        injector.destroy();
        for (const socket of sockets) socket.destroy();
      })();
      return closing;
    },
  };
}
