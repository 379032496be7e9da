// Shared parts of Keep's tests: certificates made per run (a test CA with a server certificate for
// localhost/127.0.0.1, and a rogue CA with its own), the built `keep` CLI as a child process, and
// raw HTTPS requests.
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from "node:child_process";
import { writeFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { makeDevCerts, type DevCerts } from "../../keep/cli/dev-certs.js";
import { repoPath } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";

export const keepBin = repoPath("dist", "keep", "cli", "main.js");

export const POLICY = `
[[identity]]
name = "ci-app"
kind = "machine"
policies = ["app-read"]

[[identity]]
name = "reader"
kind = "machine"
policies = ["read-only"]

[[identity]]
name = "nobody"
kind = "machine"
policies = []

[[policy]]
name = "app-read"

  [[policy.rule]]
  path = "app/**"
  capabilities = ["read", "list"]

  [[policy.rule]]
  path = "svc/*/KEY"
  capabilities = ["read", "list"]

[[policy]]
name = "read-only"

  [[policy.rule]]
  path = "app/**"
  capabilities = ["read"]

  [[policy.rule]]
  path = "app/pub/*"
  capabilities = ["list"]
`;

export interface Fixture {
  dir: string;
  certs: DevCerts;
  rogue: DevCerts;
  caFile: string;
  certFile: string;
  keyFile: string;
  policyFile: string;
  data: string;
  cleanup(): void;
}

export async function makeFixture(name: string): Promise<Fixture> {
  const tmp = makeTempDir(`keep-${name}`);
  const certs = await makeDevCerts();
  const rogue = await makeDevCerts();
  const f = (n: string): string => join(tmp.path, n);
  writeFileSync(f("ca.pem"), certs.caPem);
  writeFileSync(f("server.pem"), certs.certPem);
  writeFileSync(f("server-key.pem"), certs.keyPem, { mode: 0o600 });
  writeFileSync(f("policy.toml"), POLICY);
  return { dir: tmp.path, certs, rogue, caFile: f("ca.pem"), certFile: f("server.pem"), keyFile: f("server-key.pem"), policyFile: f("policy.toml"), data: f("data"), cleanup: tmp.cleanup };
}

export function keep(args: string[], opts: { input?: string | Buffer; cwd?: string; env?: NodeJS.ProcessEnv } = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [keepBin, ...args], { input: opts.input ?? "", cwd: opts.cwd, env: opts.env ?? process.env, encoding: "utf8" });
}

/** Stores `value` at `path` through `keep put` (stdin). */
export function put(fx: Fixture, path: string, value: string | Buffer): void {
  const r = keep(["put", path, "--data", fx.data], { input: value });
  if (r.status !== 0) throw new Error(`keep put ${path} failed: ${r.stderr}`);
}

/** Issues a token for `identity` and returns it (read back from the 0600 file). */
export function issue(fx: Fixture, identity: string, out = join(fx.dir, `${identity}-${Math.random().toString(36).slice(2)}.token`)): string {
  const r = keep(["token", "issue", identity, "--policy", fx.policyFile, "--data", fx.data, "--out", out]);
  if (r.status !== 0) throw new Error(`token issue failed: ${r.stderr}`);
  return spawnSync("cat", [out], { encoding: "utf8" }).stdout.trim();
}

export interface Served {
  url: string;
  port: number;
  child: ChildProcess;
  stderr(): string;
  stdout(): string;
  stop(): Promise<number | null>;
}

export function serve(fx: Fixture, extra: string[] = [], opts: { cwd?: string } = {}): Promise<Served> {
  const args = ["serve", "--listen", "127.0.0.1:0", "--tls-cert", fx.certFile, "--tls-key", fx.keyFile, "--policy", fx.policyFile, "--data", fx.data, ...extra];
  return startChild(args, opts.cwd);
}

export function startChild(args: string[], cwd?: string): Promise<Served> {
  const child = spawn(process.execPath, [keepBin, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  let out = "";
  child.stdout!.on("data", (c) => (out += c));
  return new Promise((resolve, reject) => {
    child.stderr!.on("data", (c) => {
      err += c;
      const m = /keep: serving on (https:\/\/\S+)/.exec(err);
      if (m) {
        const url = m[1];
        resolve({
          url,
          port: Number(new URL(url).port),
          child,
          stderr: () => err,
          stdout: () => out,
          stop: () =>
            new Promise((done) => {
              if (child.exitCode !== null) return done(child.exitCode);
              child.once("exit", (code) => done(code));
              child.kill("SIGTERM");
            }),
        });
      }
    });
    child.once("exit", (code) => reject(new Error(`keep serve exited ${code}: ${err}${out}`)));
  });
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): any;
}

export function call(s: { port: number }, ca: string, method: string, path: string, opts: { token?: string; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        servername: "localhost",
        port: s.port,
        method,
        path,
        ca,
        agent: false,
        headers: { ...(opts.token !== undefined ? { Authorization: `Bearer ${opts.token}` } : {}), ...opts.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
        });
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}
