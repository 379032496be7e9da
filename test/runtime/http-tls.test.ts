// TLS on the API listeners: HTTPS with the configured certificate, and each client_auth mode
// admitting exactly the clients it names, over real TLS handshakes on 127.0.0.1.
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { TlsConfig } from "../../compiler/ir.js";
import { sendJson } from "../../runtime/http/respond.js";
import { createHttpServer, type HttpListener } from "../../runtime/http/server.js";
import { loadListenerTls } from "../../runtime/http/tls.js";
import { makeTlsMaterial } from "../helpers/tls-material.js";

const test = suite("http: TLS listeners and client_auth");
const material = makeTlsMaterial();
process.on("exit", () => material.cleanup());
const tlsFile = material.file;
const ca = readFileSync(tlsFile("ca.pem"));
const CLIENTS = {
  none: {},
  trusted: { cert: readFileSync(tlsFile("client.pem")), key: readFileSync(tlsFile("client.key")) },
  stranger: { cert: readFileSync(tlsFile("stranger.pem")), key: readFileSync(tlsFile("stranger.key")) },
} as const;
type Client = keyof typeof CLIENTS;

async function start(clientAuth: TlsConfig["clientAuth"]): Promise<HttpListener> {
  const tls = loadListenerTls(
    { certFile: tlsFile("server.pem"), keyFile: tlsFile("server.key"), clientCaFile: clientAuth === "none" ? null : tlsFile("ca.pem"), clientAuth },
    "ingress",
  );
  const server = createHttpServer((req, res) => sendJson(res, 200, { secure: "encrypted" in req.socket }), {
    headersTimeoutMs: 5_000,
    requestTimeoutMs: 10_000,
    keepAliveTimeoutMs: 5_000,
    maxHeaderSize: 16 * 1024,
    tls,
  });
  return server.listen("127.0.0.1:0");
}

/** "ok" with the reply's body, or "refused" when the handshake or connection failed. */
function call(port: number, client: Client): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/", method: "GET", ca, agent: false, ...CLIENTS[client] }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve(`ok ${body}`));
      res.on("error", () => resolve("refused"));
    });
    req.on("error", () => resolve("refused"));
    req.end();
  });
}

const EXPECTED: Record<TlsConfig["clientAuth"], Record<Client, "ok" | "refused">> = {
  none: { none: "ok", trusted: "ok", stranger: "ok" },
  request: { none: "ok", trusted: "ok", stranger: "ok" },
  require_any: { none: "refused", trusted: "ok", stranger: "ok" },
  verify_if_given: { none: "ok", trusted: "ok", stranger: "refused" },
  require_and_verify: { none: "refused", trusted: "ok", stranger: "refused" },
};

for (const [mode, expected] of Object.entries(EXPECTED) as [TlsConfig["clientAuth"], Record<Client, string>][]) {
  test(`client_auth ${mode}`, async () => {
    const listener = await start(mode);
    try {
      for (const client of Object.keys(CLIENTS) as Client[]) {
        const outcome = await call(listener.address.port, client);
        if (expected[client] === "ok") assert.is(outcome, 'ok {"secure":true}', `${mode}, client certificate ${client}`);
        else assert.is(outcome, "refused", `${mode}, client certificate ${client}`);
      }
    } finally {
      await listener.close(1_000);
    }
  });
}

test("plain HTTP to a TLS listener gets no HTTP answer", async () => {
  const listener = await start("none");
  try {
    const reply = await fetch(`http://127.0.0.1:${listener.address.port}/`).then(
      (response) => `answered ${response.status}`,
      () => "failed",
    );
    assert.is(reply, "failed");
  } finally {
    await listener.close(1_000);
  }
});

test("an unreadable certificate file is an error naming it, not a plain listener", () => {
  assert.throws(
    () => loadListenerTls({ certFile: "/nonexistent/cert.pem", keyFile: tlsFile("server.key"), clientCaFile: null, clientAuth: "none" }, "pull"),
    (error: Error) => /pull tls cert_file \/nonexistent\/cert\.pem cannot be read/.test(error.message),
  );
});

test("a key file that holds no private key is an error naming the directive and file, not OpenSSL's", () => {
  assert.throws(
    () => loadListenerTls({ certFile: tlsFile("server.pem"), keyFile: tlsFile("ca.pem"), clientCaFile: null, clientAuth: "none" }, "ingress"),
    (error: Error) => error.message.startsWith(`ingress tls key_file ${tlsFile("ca.pem")} cannot be read: it holds no PEM private key`),
  );
});

test.run();
