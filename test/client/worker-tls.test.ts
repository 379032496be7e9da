// The worker library over HTTPS with a client certificate: `pull_api { tls { client_auth require } }` on
// the built `spool run`, the worker given an undici Agent with the CA and its certificate (`dispatcher`),
// over both transports; without the certificate every call fails as a transport error, and nothing crashes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Agent } from "undici";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createWorker } from "../../client/index.js";
import { call, eventually } from "../app/helpers/http.js";
import { spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "../app/helpers/spool-process.js";
import { freePorts, writeSpoolfile } from "../app/helpers/spoolfile.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { makeTlsMaterial, type TlsMaterial } from "../helpers/tls-material.js";

const temp = makeTempDir("client-tls");
let material: TlsMaterial;
let spool: SpoolProcess;
let ingress: string;
let pull: string;

const test = suite("worker library over mutual TLS");

test.before(async () => {
  material = makeTlsMaterial();
  const ports = await freePorts();
  ingress = `http://127.0.0.1:${ports.ingress}`;
  pull = `https://127.0.0.1:${ports.pull}`;
  const config = writeSpoolfile(
    temp.path,
    [
      `ingress { listen 127.0.0.1:${ports.ingress} }`,
      `pull_api {`,
      `  listen 127.0.0.1:${ports.pull}`,
      `  auth token raw:pull-token`,
      `  max_wait 30s`,
      `  tls { cert_file ${material.file("server.pem")}; key_file ${material.file("server.key")}; client_ca ${material.file("ca.pem")}; client_auth require }`,
      `}`,
      `admin_api { listen 127.0.0.1:${ports.admin} }`,
      `/hooks/http { pull { path /http } }`,
      `/hooks/sse { pull { path /sse } }`,
      "",
    ].join("\n"),
  );
  spool = spawnSpool(["run", "--config", config, "--db", join(temp.path, "spool.db")]);
  await waitHealthy(spool, `http://127.0.0.1:${ports.admin}`);
});

test.after(async () => {
  await stopSpool(spool);
  material.cleanup();
  temp.cleanup();
});

for (const transport of ["http", "sse"] as const) {
  test(`${transport}: messages are handled over HTTPS with the client certificate`, async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await call(`${ingress}/hooks/${transport}`, { body: `m${i}` })).json.ids[0]);
    const dispatcher = new Agent({ connect: { ca: readFileSync(material.file("ca.pem")), cert: readFileSync(material.file("client.pem")), key: readFileSync(material.file("client.key")) } });
    const done: string[] = [];
    const worker = createWorker({ url: pull, token: "pull-token", endpoint: `/${transport}`, transport, concurrency: 2, dispatcher, handler: (m) => void done.push(m.id) });
    await eventually(() => (done.length >= 5 ? true : undefined), 10_000, "five messages");
    await worker.stop();
    await dispatcher.close();
    assert.equal([...done].sort(), [...ids].sort());
  });
}

test("without a client certificate every call is a transport error, retried, and stop() resolves", async () => {
  const dispatcher = new Agent({ connect: { ca: readFileSync(material.file("ca.pem")) } });
  const errors: unknown[] = [];
  const worker = createWorker({
    url: pull,
    token: "pull-token",
    endpoint: "/http",
    dispatcher,
    handler: () => {},
    onEvent: (event) => event.type === "transport_error" && errors.push(event.error),
  });
  await eventually(() => (errors.length >= 2 ? true : undefined), 10_000, "two failed dequeues");
  await worker.stop();
  await dispatcher.close();
  assert.is((errors[0] as { code?: string }).code, "network");
});

test.run();
