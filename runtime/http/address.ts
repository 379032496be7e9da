// Listen addresses as the Spoolfile writes them: ":8080", "127.0.0.1:0", "[::1]:9443", "localhost:9900".

/** Where a server binds: an IR ListenAddress (compiler/ir.ts) as node:net's listen() takes it. */
export interface BindAddress {
  /** undefined means every interface (Node binds "::" with IPv4 mapped in, or 0.0.0.0). */
  host: string | undefined;
  port: number;
}

export function parseListenAddress(text: string): BindAddress {
  const trimmed = text.trim();
  let host: string;
  let portText: string;
  if (trimmed.startsWith("[")) {
    const close = trimmed.indexOf("]");
    if (close < 0 || trimmed[close + 1] !== ":") throw new Error(`listen address ${JSON.stringify(text)}: expected [IPv6]:port`);
    host = trimmed.slice(1, close);
    portText = trimmed.slice(close + 2);
  } else {
    const colon = trimmed.lastIndexOf(":");
    if (colon < 0) throw new Error(`listen address ${JSON.stringify(text)}: expected host:port or :port`);
    host = trimmed.slice(0, colon);
    portText = trimmed.slice(colon + 1);
    if (host.includes(":")) throw new Error(`listen address ${JSON.stringify(text)}: write IPv6 hosts as [addr]:port`);
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
    throw new Error(`listen address ${JSON.stringify(text)}: port must be 0..65535`);
  }
  return { host: host === "" ? undefined : host, port: Number(portText) };
}

/** "host:port" for logs and URLs, bracketing IPv6 hosts. */
export function formatHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
