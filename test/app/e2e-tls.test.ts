// `tls { }` on the built `spool run`: ingress over HTTPS, a Pull API that requires client
// certificates its client_ca vouches for, certificate paths relative to the Spoolfile, and a
// certificate that cannot be read stopping the start with its file:line:col (never plain HTTP).
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { repoPath, spoolBin } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { makeTlsMaterial } from "../helpers/tls-material.js";
import { freePort, spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "./helpers/spool-process.js";

const test = suite("spool run: TLS listeners");
const temp = makeTempDir("e2e-tls");
const material = makeTlsMaterial();
process.on("exit", () => material.cleanup());
const ca = readFileSync(material.file("ca.pem"));
const clientCert = { cert: readFileSync(material.file("client.pem")), key: readFileSync(material.file("client.key")) };
let proc: SpoolProcess;
let ports: { ingress: number; pull: number; admin: number };

function spoolfile(certFile: string): string {
  return `ingress {
  listen 127.0.0.1:${ports.ingress}
  tls {
    cert_file ${certFile}
    key_file tls/server.key
  }
}
pull_api {
  listen 127.0.0.1:${ports.pull}
  auth token raw:pull-token
  tls {
    cert_file tls/server.pem
    key_file tls/server.key
    client_ca tls/ca.pem
    client_auth require_and_verify
  }
}
admin_api { listen 127.0.0.1:${ports.admin} }
/hooks/a { pull { path /a } }
`;
}

/** Status and body of an HTTPS POST, or "refused" when the connection failed. */
function post(port: number, path: string, body: string, extra: { cert?: Buffer; key?: Buffer; token?: string; ca?: Buffer } = {}): Promise<{ status: number; body: string } | "refused"> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (extra.token) headers.authorization = `Bearer ${extra.token}`;
    // A CA other than the test CA is the self-signed `stranger`, whose name is not 127.0.0.1.
    const trust = extra.ca ? { ca: extra.ca, checkServerIdentity: () => undefined } : { ca };
    const req = request({ host: "127.0.0.1", port, path, method: "POST", ...trust, agent: false, headers, cert: extra.cert, key: extra.key }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on("error", () => resolve("refused"));
    });
    req.on("error", () => resolve("refused"));
    req.end(body);
  });
}

test.before(async () => {
  ports = { ingress: await freePort(), pull: await freePort(), admin: await freePort() };
  mkdirSync(join(temp.path, "tls"));
  for (const name of ["server.pem", "server.key", "ca.pem"] as const) copyFileSync(material.file(name), join(temp.path, "tls", name));
  writeFileSync(join(temp.path, "Spoolfile"), spoolfile("tls/server.pem"));
  // Started from another directory: the certificate paths are the Spoolfile's, not the cwd's.
  proc = spawnSpool(["run", "--config", join(temp.path, "Spoolfile"), "--db", join(temp.path, "spool.db"), "--watch"], { cwd: repoPath() });
  await waitHealthy(proc, `http://127.0.0.1:${ports.admin}`);
});

test.after(async () => {
  await stopSpool(proc);
  temp.cleanup();
});

test("ingress answers over HTTPS and not over plain HTTP; the Pull API hands the message to a client with a trusted certificate only", async () => {
  const plain = await fetch(`http://127.0.0.1:${ports.ingress}/hooks/a`, { method: "POST", body: "{}" }).then(
    (response) => `answered ${response.status}`,
    () => "failed",
  );
  assert.is(plain, "failed", "plain HTTP on the TLS listener stores nothing and gets no answer");
  const posted = await post(ports.ingress, "/hooks/a", '{"n":1}');
  assert.ok(posted !== "refused" && posted.status === 202, JSON.stringify(posted));
  const { ids } = JSON.parse((posted as { body: string }).body) as { ids: string[] };

  assert.is(await post(ports.pull, "/a/dequeue", "{}", { token: "pull-token" }), "refused", "no client certificate");
  const dequeued = await post(ports.pull, "/a/dequeue", '{"batch":10}', { token: "pull-token", ...clientCert });
  assert.ok(dequeued !== "refused" && dequeued.status === 200, JSON.stringify(dequeued));
  const items = (JSON.parse((dequeued as { body: string }).body) as { items: { id: string }[] }).items;
  assert.equal(items.map((item) => item.id), ids, "exactly the message posted over HTTPS");
});

test("a reload serves the certificate files as they are now (a renewed certificate needs no restart)", async () => {
  copyFileSync(material.file("stranger.pem"), join(temp.path, "tls", "server.pem"));
  copyFileSync(material.file("stranger.key"), join(temp.path, "tls", "server.key"));
  writeFileSync(join(temp.path, "Spoolfile"), spoolfile("tls/server.pem") + "# renewed\n");
  await proc.waitForOutput("config_reloaded");
  assert.is(await post(ports.ingress, "/hooks/a", "{}"), "refused", "the old CA no longer vouches for what is served");
  const renewed = await post(ports.ingress, "/hooks/a", "{}", { ca: readFileSync(material.file("stranger.pem")) });
  assert.ok(renewed !== "refused" && renewed.status === 202, JSON.stringify(renewed));
});

test("a certificate file that cannot be read stops the start with its position", async () => {
  const config = join(temp.path, "Broken.spool");
  writeFileSync(config, spoolfile("tls/missing.pem"));
  const broken = spawnSpool(["run", "--config", config, "--db", join(temp.path, "broken.db")]);
  const { code } = await broken.exited;
  assert.is(code, 1);
  // Run output goes to logs: it names the file (a name is no secret) and why, never a value of the config.
  assert.match(broken.output(), /Broken\.spool:3:3: file cannot be read: ingress › tls: expected a readable cert_file tls\/missing\.pem \(no such file\)/);
  assert.match(spawnSync(process.execPath, [spoolBin, "config", "validate", "--config", config], { encoding: "utf8" }).stderr, /Broken\.spool:3:3: .*ingress tls: cert_file tls\/missing\.pem cannot be read/);
});

test("a certificate or key file that is no PEM certificate or key is refused by validate and run alike, with its position", async () => {
  const config = join(temp.path, "Junk.spool");
  writeFileSync(join(temp.path, "tls", "junk.pem"), "junk\n");
  writeFileSync(config, spoolfile("tls/junk.pem"));
  const validate = spawnSync(process.execPath, [spoolBin, "config", "validate", "--config", config], { encoding: "utf8" });
  assert.match(validate.stderr, /Junk\.spool:3:3: .*ingress tls: cert_file tls\/junk\.pem cannot be read: it holds no PEM certificate.*spool run refuses/);
  const strict = spawnSync(process.execPath, [spoolBin, "config", "validate", "--strict-secrets", "--config", config], { encoding: "utf8" });
  assert.is.not(strict.status, 0);
  const broken = spawnSpool(["run", "--config", config, "--db", join(temp.path, "junk.db")]);
  const { code } = await broken.exited;
  assert.is(code, 1);
  assert.match(broken.output(), /Junk\.spool:3:3: file cannot be read: ingress › tls: expected a readable cert_file tls\/junk\.pem \(it holds no PEM certificate/);
  assert.not.ok(broken.output().includes("PEM routines"), broken.output());
});

test.run();
