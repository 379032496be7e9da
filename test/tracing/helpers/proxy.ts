// A local HTTP CONNECT proxy for the tracing tests (node:http's 'connect' event): it records every
// tunnel asked for, with its Proxy-Authorization, and pipes bytes both ways.
import { createServer, type IncomingHttpHeaders } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";

export interface ConnectProxy {
  readonly port: number;
  readonly tunnels: { authority: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

export async function startConnectProxy(): Promise<ConnectProxy> {
  const tunnels: ConnectProxy["tunnels"] = [];
  const sockets = new Set<Socket>();
  const server = createServer((_req, res) => res.writeHead(405).end());
  server.on("connect", (req, client: Socket, head: Buffer) => {
    const authority = req.url ?? "";
    tunnels.push({ authority, headers: req.headers });
    const [host, port] = [authority.slice(0, authority.lastIndexOf(":")), Number(authority.slice(authority.lastIndexOf(":") + 1))];
    const upstream = connect(port, host.replace(/^\[|\]$/g, ""), () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    tunnels,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
