// Keep benchmark (`npm run bench -- keep`): reads of a 1 KB secret by 50 concurrent keep-alive
// clients over TLS, each audited and fsynced, against the built `keep serve`; beside it, in the
// same run, a minimal reference (node:https + an in-memory map + an append-only audit file with
// group-committed fsync). Prints reads/s, p99, the ratio, MET/MISSED against the targets
// (≥ 0.7× the reference, p99 ≤ 25 ms) and keep's idle RSS (target ≤ 80 MB).
//
//   node dist/test/bench/keep.bench.js            Env: SPOOL_BENCH_SECONDS (per load, default 8)
import { spawn, type ChildProcess } from "node:child_process";
import { fsync, openSync, readFileSync, write, writeFileSync } from "node:fs";
import { createServer } from "node:https";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { tokenIssue } from "../../keep/cli/admin.js";
import { makeDevCerts } from "../../keep/cli/dev-certs.js";
import { SecretStore } from "../../keep/server/store.js";
import { makeTempDir } from "../helpers/temp-dir.js";
import { cpuNote, withCpuPerUnit } from "./load.js";

const SECONDS = Number(process.env.SPOOL_BENCH_SECONDS ?? 8);
const CONNECTIONS = 50;
const PATH = "bench/app/SECRET_1K";
const KEEP_CLI = fileURLToPath(new URL("../../keep/cli/main.js", import.meta.url));

/** The reference server, run as its own process: `keep.bench.js --reference PORTFILE CERT KEY AUDIT TOKEN`. */
function reference([portFile, cert, key, auditFile, token]: string[]): void {
  const secrets = new Map([[PATH, "v".repeat(1024)]]);
  const fd = openSync(auditFile, "a");
  let queue: { line: string; done: (ok: boolean) => void }[] = [];
  let busy = false;
  const flush = (): void => {
    if (busy || queue.length === 0) return;
    busy = true;
    const batch = queue;
    queue = [];
    write(fd, batch.map((b) => b.line).join(""), (we) =>
      fsync(fd, (fe) => {
        for (const b of batch) b.done(!we && !fe);
        busy = false;
        flush();
      }),
    );
  };
  const server = createServer({ cert: readFileSync(cert), key: readFileSync(key), minVersion: "TLSv1.2" }, (req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
    const path = (req.url ?? "").slice("/v1/secrets/".length);
    const value = secrets.get(path);
    if (value === undefined) return void res.writeHead(404).end();
    queue.push({
      line: `${JSON.stringify({ ts: new Date().toISOString(), identity: "bench", op: "read", path })}\n`,
      done: (ok) => (ok ? res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ value })) : res.writeHead(503).end()),
    });
    flush();
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, "127.0.0.1", () => writeFileSync(portFile, String((server.address() as { port: number }).port)));
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

function started(child: ChildProcess, ready: () => number | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      const port = ready();
      if (port) {
        clearInterval(poll);
        resolve(port);
      }
    }, 20);
    child.once("exit", (code) => {
      clearInterval(poll);
      reject(new Error(`exited ${code}`));
    });
  });
}

interface Measured {
  rps: number;
  p99: number;
  non2xx: number;
  total: number;
  cpuUsPerUnit: number | null;
}

/** Loads the server at `port` (process `pid`) and measures its CPU time per read too. */
function load(port: number, pid: number, token: string, seconds: number): Promise<Measured> {
  return withCpuPerUnit(
    pid,
    async () => {
      const r = await autocannon({ url: `https://127.0.0.1:${port}/v1/secrets/${PATH}`, connections: CONNECTIONS, duration: seconds, headers: { authorization: `Bearer ${token}` } });
      return { rps: r.requests.average, p99: r.latency.p99, non2xx: r.non2xx, total: r.requests.total };
    },
    (r) => r.total,
  );
}

async function main(): Promise<void> {
  const tmp = makeTempDir("keep-bench");
  const f = (n: string): string => join(tmp.path, n);
  const certs = await makeDevCerts();
  writeFileSync(f("cert.pem"), certs.certPem);
  writeFileSync(f("key.pem"), certs.keyPem);
  writeFileSync(f("policy.toml"), '[[identity]]\nname = "bench"\nkind = "machine"\npolicies = ["p"]\n\n[[policy]]\nname = "p"\n\n  [[policy.rule]]\n  path = "bench/**"\n  capabilities = ["read"]\n');
  const store = new SecretStore(f("data"));
  store.put(PATH, Buffer.from("v".repeat(1024)));
  store.close();
  tokenIssue("bench", f("policy.toml"), f("data"), f("token"));
  const token = readFileSync(f("token"), "utf8").trim();

  let keepErr = "";
  const keep = spawn(process.execPath, [KEEP_CLI, "serve", "--listen", "127.0.0.1:0", "--tls-cert", f("cert.pem"), "--tls-key", f("key.pem"), "--policy", f("policy.toml"), "--data", f("data")], { stdio: ["ignore", "ignore", "pipe"] });
  keep.stderr!.on("data", (c) => (keepErr += c));
  const keepPort = await started(keep, () => Number(/serving on https:\/\/[^:]+:(\d+)/.exec(keepErr)?.[1]) || undefined);
  const ref = spawn(process.execPath, [fileURLToPath(import.meta.url), "--reference", f("port"), f("cert.pem"), f("key.pem"), f("ref-audit.log"), token], { stdio: "inherit" });
  const refPort = await started(ref, () => {
    try {
      return Number(readFileSync(f("port"), "utf8")) || undefined;
    } catch {
      return undefined;
    }
  });
  const idleRss = rssMb(keep.pid!);
  const measureKeep = (seconds: number) => load(keepPort, keep.pid!, token, seconds);
  const measureRef = (seconds: number) => load(refPort, ref.pid!, token, seconds);
  await measureKeep(2);
  await measureRef(2);
  // Two rounds, alternating who goes first.
  const rounds: { keep: Measured; ref: Measured }[] = [];
  for (let i = 0; i < 2; i++) {
    if (i % 2 === 0) {
      const k = await measureKeep(SECONDS);
      rounds.push({ keep: k, ref: await measureRef(SECONDS) });
    } else {
      const r = await measureRef(SECONDS);
      rounds.push({ keep: await measureKeep(SECONDS), ref: r });
    }
  }
  const cpu = (m: Measured[]): number | null => (m.some((x) => x.cpuUsPerUnit === null) ? null : m.reduce((s, x) => s + (x.cpuUsPerUnit ?? 0), 0) / m.length);
  const keepRps = rounds.reduce((s, r) => s + r.keep.rps, 0) / rounds.length;
  const refRps = rounds.reduce((s, r) => s + r.ref.rps, 0) / rounds.length;
  const p99 = Math.max(...rounds.map((r) => r.keep.p99));
  const refP99 = Math.max(...rounds.map((r) => r.ref.p99));
  const non2xx = rounds.reduce((s, r) => s + r.keep.non2xx, 0);
  const ratio = keepRps / refRps;
  const mark = (ok: boolean): string => (ok ? "MET" : "MISSED");
  process.stdout.write(`  keep serve reads (1 KB, ${CONNECTIONS} keep-alive TLS clients, audited+fsynced)  ${keepRps.toFixed(0)} reads/s, p99 ${p99} ms${cpuNote(cpu(rounds.map((r) => r.keep)), "read")}${non2xx ? `, ${non2xx} non-2xx` : ""}\n`);
  process.stdout.write(`  reference (node:https + map + group-committed audit)              ${refRps.toFixed(0)} reads/s, p99 ${refP99} ms${cpuNote(cpu(rounds.map((r) => r.ref)), "read")}\n`);
  process.stdout.write(`  ratio ${ratio.toFixed(2)}x reference (target >= 0.7x): ${mark(ratio >= 0.7)}; p99 ${p99} ms (target <= 25 ms): ${mark(p99 <= 25)}\n`);
  process.stdout.write(`  keep idle RSS after startup ${idleRss.toFixed(1)} MB (target <= 80 MB): ${mark(idleRss <= 80)}; after load ${rssMb(keep.pid!).toFixed(1)} MB\n`);
  keep.kill("SIGTERM");
  ref.kill("SIGTERM");
  tmp.cleanup();
  if (non2xx > 0) process.exitCode = 1;
}

if (process.argv[2] === "--reference") reference(process.argv.slice(3));
else await main();
