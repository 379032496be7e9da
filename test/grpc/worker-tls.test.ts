// The gRPC worker service under `pull_api { tls }` against the built `spool run`, with certificates
// made for this run: TLS with the server certificate, mutual TLS (client_auth require_and_verify),
// and client_auth require_any (any certificate, none refused), which Spool checks after the handshake.
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { credentials } from "@grpc/grpc-js";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { makeTempDir } from "../helpers/temp-dir.js";
import { makeTlsMaterial, type TlsMaterial } from "../helpers/tls-material.js";
import { freePort, spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "../app/helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "../app/helpers/spoolfile.js";
import { isFailure, workerClient } from "./helpers/client.js";

const UNAVAILABLE = 14;
const temp = makeTempDir("grpc-tls");
let tls: TlsMaterial;
const running: { proc: SpoolProcess; grpc: string; config: string; text: string; cert: string; key: string }[] = [];
const test = suite("spool run: the gRPC worker service over TLS");

/** One `spool run` per client_auth mode: "" (none), require_and_verify, require_any. */
const MODES = ["", "client_ca ca.pem; client_auth require_and_verify", "client_auth require_any"];

test.before(async () => {
  tls = makeTlsMaterial();
  for (const [index, mode] of MODES.entries()) {
    const ports = await freePorts();
    const grpcPort = await freePort();
    // Each instance serves its own copy of the certificate, so the first can have it renewed.
    const [cert, key] = [join(temp.path, `server-${index}.pem`), join(temp.path, `server-${index}.key`)];
    copyFileSync(tls.file("server.pem"), cert);
    copyFileSync(tls.file("server.key"), key);
    const block = `tls { cert_file ${cert}; key_file ${key}; ${mode.replace("ca.pem", tls.file("ca.pem"))} }`;
    const text = spoolfileText(ports, `/hooks/a { pull { path /a } }`, { pullExtra: `; grpc_listen 127.0.0.1:${grpcPort}; ${block}` });
    const config = writeSpoolfile(temp.path, text, `Spoolfile.${index}`);
    const proc = spawnSpool(["run", "--config", config, "--db", join(temp.path, `${index}.db`), "--watch"]);
    running.push({ proc, grpc: `127.0.0.1:${grpcPort}`, config, text, cert, key });
    await waitHealthy(proc, urls(ports).admin);
  }
});

test.after(async () => {
  for (const { proc } of running) assert.is((await stopSpool(proc)).code, 0, proc.output().slice(-2000));
  tls.cleanup();
  temp.cleanup();
});

const read = (name: Parameters<TlsMaterial["file"]>[0]) => readFileSync(tls.file(name));
/** The server certificate names localhost; the client connects to 127.0.0.1 and checks that name. */
const NAME = { "grpc.ssl_target_name_override": "localhost" };

async function dequeue(address: string, channel: ReturnType<typeof credentials.createSsl>): Promise<unknown> {
  const worker = workerClient(address, "pull-token", channel, NAME);
  try {
    return await worker.call("Dequeue", { endpoint: "/a" }, { deadlineMs: 5_000 });
  } finally {
    worker.close();
  }
}

function refused(reply: unknown, what: string): void {
  assert.ok(isFailure(reply), `${what}: ${JSON.stringify(reply)}`);
  assert.is(reply.code, UNAVAILABLE, what);
}

test("tls: a client trusting the CA is served; cleartext (h2c) and an untrusting client are refused", async () => {
  const { grpc } = running[0];
  assert.equal(await dequeue(grpc, credentials.createSsl(read("ca.pem"))), { items: [] });
  refused(await dequeue(grpc, credentials.createInsecure()), "cleartext");
  refused(await dequeue(grpc, credentials.createSsl(read("stranger.pem"))), "a client that trusts another CA");
});

test("a reload serves the certificate files as they are now: a renewed certificate needs no restart", async () => {
  const { proc, grpc, config, text, cert, key } = running[0];
  copyFileSync(tls.file("stranger.pem"), cert);
  copyFileSync(tls.file("stranger.key"), key);
  writeFileSync(config, `${text}# renewed\n`);
  await proc.waitForOutput("config_reloaded");
  refused(await dequeue(grpc, credentials.createSsl(read("ca.pem"))), "the old CA no longer vouches for what is served");
  assert.equal(await dequeue(grpc, credentials.createSsl(read("stranger.pem"))), { items: [] });
});

test("mTLS (client_auth require_and_verify): only a certificate the client_ca vouches for gets in", async () => {
  const { grpc } = running[1];
  assert.equal(await dequeue(grpc, credentials.createSsl(read("ca.pem"), read("client.key"), read("client.pem"))), { items: [] });
  refused(await dequeue(grpc, credentials.createSsl(read("ca.pem"))), "no client certificate");
  refused(await dequeue(grpc, credentials.createSsl(read("ca.pem"), read("stranger.key"), read("stranger.pem"))), "a self-signed client certificate");
});

test("client_auth require_any: any client certificate gets in, none is refused", async () => {
  const { grpc } = running[2];
  assert.equal(await dequeue(grpc, credentials.createSsl(read("ca.pem"), read("stranger.key"), read("stranger.pem"))), { items: [] });
  refused(await dequeue(grpc, credentials.createSsl(read("ca.pem"))), "no client certificate");
});

test.run();
