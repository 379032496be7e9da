// keep serve as a process: startup refusals (exit 1 naming the problem, usage errors exit 2), TLS
// 1.2+ only with no HTTP answer to plaintext, SIGHUP policy reload (a broken file keeps the old
// policy), and SIGTERM/SIGINT exit 0.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { connect as tlsConnect, type SecureVersion } from "node:tls";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { call, issue, keep, keepBin, makeFixture, POLICY, put, serve, type Fixture } from "./keep-helpers.js";

const test = suite("keep serve: lifecycle");
let fx: Fixture;
let token: string;

test.before(async () => {
  fx = await makeFixture("life");
  put(fx, "app/prod/A", "value-a");
  put(fx, "svc/a/KEY", "value-svc");
  token = issue(fx, "ci-app");
});
test.after(() => fx.cleanup());

function serveArgs(over: Record<string, string>): string[] {
  const flags: Record<string, string> = { listen: "127.0.0.1:0", "tls-cert": fx.certFile, "tls-key": fx.keyFile, policy: fx.policyFile, data: fx.data, ...over };
  return ["serve", ...Object.entries(flags).flatMap(([k, v]) => (v === "" ? [] : [`--${k}`, v]))];
}

test("startup exits 1 naming the problem: unreadable cert or key, invalid policy, audit log, busy address", async () => {
  const bad = join(fx.dir, "broken.toml");
  writeFileSync(bad, POLICY.replace('kind = "machine"', 'kind = "person"'));
  const cases: [Record<string, string>, RegExp][] = [
    [{ "tls-cert": join(fx.dir, "missing.pem") }, /TLS certificate .*missing\.pem/],
    [{ "tls-key": join(fx.dir, "missing-key.pem") }, /TLS key .*missing-key\.pem/],
    [{ "tls-key": fx.caFile }, /TLS certificate or key is unusable/],
    [{ policy: bad }, /broken\.toml:4:1: kind must be "machine"/],
    [{ "audit-log": join(fx.dir, "no-such-dir", "audit.log") }, /cannot open the audit log/],
  ];
  for (const [over, pattern] of cases) {
    const r = keep(serveArgs(over));
    assert.is(r.status, 1, JSON.stringify(over));
    assert.match(r.stderr, pattern);
  }
  const srv = await serve(fx);
  const busy = keep(serveArgs({ listen: `127.0.0.1:${srv.port}` }));
  assert.is(busy.status, 1);
  assert.match(busy.stderr, /cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\)/);
  await srv.stop();
  assert.not.ok(existsSync(join(fx.data, "audit.log")) && readFileSync(join(fx.data, "audit.log"), "utf8") !== "", "nothing audited at startup");
});

test("without --dev, --tls-cert, --tls-key and --policy are required (usage error, exit 2)", () => {
  for (const flag of ["tls-cert", "tls-key", "policy", "listen", "data"]) {
    const r = keep(serveArgs({ [flag]: "" }));
    assert.is(r.status, 2, flag);
    assert.match(r.stderr, new RegExp(`--${flag} is required`));
  }
});

function tlsHandshake(port: number, min: SecureVersion, max: SecureVersion): Promise<string> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: "127.0.0.1", port, servername: "localhost", ca: fx.certs.caPem, minVersion: min, maxVersion: max, ciphers: "DEFAULT@SECLEVEL=0" });
    socket.once("secureConnect", () => {
      resolve(socket.getProtocol() ?? "?");
      socket.end();
    });
    socket.once("error", (e: NodeJS.ErrnoException) => resolve(`error ${e.code}`));
  });
}

test("TLS 1.2 and 1.3 are accepted, older versions refused; plaintext gets no HTTP response", async () => {
  const srv = await serve(fx);
  try {
    assert.is(await tlsHandshake(srv.port, "TLSv1.3", "TLSv1.3"), "TLSv1.3");
    assert.is(await tlsHandshake(srv.port, "TLSv1.2", "TLSv1.2"), "TLSv1.2");
    assert.match(await tlsHandshake(srv.port, "TLSv1", "TLSv1.1"), /^error /);
    const answer = await new Promise<string>((resolve) => {
      let got = "";
      const s = netConnect(srv.port, "127.0.0.1", () => s.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"));
      s.on("data", (c) => (got += c.toString("latin1")));
      s.on("close", () => resolve(got));
      s.on("error", () => undefined);
    });
    assert.not.ok(answer.includes("HTTP/"), "no HTTP answer to plaintext");
  } finally {
    await srv.stop();
  }
});

async function waitFor(read: () => string, pattern: RegExp): Promise<void> {
  while (!pattern.test(read())) await delay(20);
}

test("SIGHUP re-reads the policy; an invalid file keeps the old policy and logs why", async () => {
  const srv = await serve(fx);
  const policy = readFileSync(fx.policyFile, "utf8");
  try {
    const get = (p: string) => call(srv, fx.certs.caPem, "GET", p, { token });
    assert.is((await get("/v1/secrets/svc/a/KEY")).status, 200);
    writeFileSync(fx.policyFile, policy.replace('path = "svc/*/KEY"', 'path = "other/**"'));
    srv.child.kill("SIGHUP");
    await waitFor(srv.stderr, /policy reloaded/);
    assert.is((await get("/v1/secrets/svc/a/KEY")).status, 403, "the new policy is in force");
    writeFileSync(fx.policyFile, `${policy}\n[[identity]]\nname = "x"\nkind = "human"\npolicies = []\n`);
    srv.child.kill("SIGHUP");
    await waitFor(srv.stderr, /policy reload failed, keeping the previous policy: .*policy\.toml:\d+:\d+: kind must be "machine"/);
    assert.is((await get("/v1/secrets/svc/a/KEY")).status, 403, "still the last valid policy");
    assert.is((await get("/v1/secrets/app/prod/A")).status, 200);
  } finally {
    writeFileSync(fx.policyFile, policy);
    await srv.stop();
  }
});

test("SIGTERM and SIGINT stop the server with exit 0", async () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    const srv = await serve(fx);
    await call(srv, fx.certs.caPem, "GET", "/healthz");
    const code = new Promise((resolve) => srv.child.once("exit", (c) => resolve(c)));
    srv.child.kill(signal);
    assert.is(await code, 0, signal);
  }
});

test("the CLI is the package's bin.keep and prints its version", () => {
  const pkg = JSON.parse(readFileSync(join(keepBin, "../../../../package.json"), "utf8"));
  assert.is(pkg.bin.keep, "dist/keep/cli/main.js");
  const r = keep(["version"]);
  assert.is(r.stdout, `${pkg.version}\n`);
});

test.run();
