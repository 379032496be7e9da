// Draining a SQLite queue through the gRPC worker service beside the HTTP Pull API, in one run of
// the built `spool run` (one process, one database): N queued messages (1 KB, filled through
// ingress before each drain), 4 workers each looping Dequeue batch 32 → batch Ack until the queue is
// empty. HTTP: undici, 8 keep-alive connections (the loop of ingress.bench.ts). gRPC: one grpc-js
// channel (HTTP/2, the calls multiplexed). Rounds alternate which goes first. Target: gRPC ≥ the
// HTTP loop. Figures are msg/s and the CPU spool spent per message; the machine is shared, so
// compare the two lines of one run, not runs with each other.
// Run: node dist/test/bench/workers-grpc.bench.js   (SPOOL_BENCH_GRPC_MESSAGES: N (60000);
// SPOOL_BENCH_ROUNDS: rounds (2); SPOOL_BENCH_PART=grpc or =http drains through that one only, for profiling)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { workerClient, type WorkerClient } from "../grpc/helpers/client.js";
import { cpuNote, fmt, freePort, load, startSpool, stopChildren, waitFor, withCpuPerUnit } from "./load.js";

const MESSAGES = Number(process.env.SPOOL_BENCH_GRPC_MESSAGES ?? 60_000);
const ROUNDS = Number(process.env.SPOOL_BENCH_ROUNDS ?? 2);
const WORKERS = 4;
const BATCH = 32;
const PART = process.env.SPOOL_BENCH_PART;

type Drained = { messages: number; perSecond: number };

async function drainHttp(pullBase: string): Promise<Drained> {
  const pool = new Pool(pullBase, { connections: 8 });
  const headers = { authorization: "Bearer bench", "content-type": "application/json" };
  let drained = 0;
  const started = performance.now();
  const worker = async () => {
    for (;;) {
      const response = await pool.request({ method: "POST", path: "/bench/dequeue", headers, body: `{"batch":${BATCH}}` });
      const { items } = (await response.body.json()) as { items: { lease_id: string }[] };
      if (items.length === 0) return;
      const ack = await pool.request({ method: "POST", path: "/bench/ack", headers, body: JSON.stringify({ lease_ids: items.map((i) => i.lease_id) }) });
      await ack.body.text();
      if (ack.statusCode !== 200) throw new Error(`ack answered ${ack.statusCode}`);
      drained += items.length;
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  return { messages: drained, perSecond: drained / seconds };
}

async function drainGrpc(client: WorkerClient): Promise<Drained> {
  let drained = 0;
  const started = performance.now();
  const worker = async () => {
    for (;;) {
      const { items } = await client.call("Dequeue", { endpoint: "/bench", batch: BATCH });
      if (!items) throw new Error("Dequeue failed");
      if (items.length === 0) return;
      const acked = await client.call("Ack", { endpoint: "/bench", lease_ids: items.map((i: { lease_id: string }) => i.lease_id) });
      if (acked.acked !== items.length) throw new Error(`Ack answered ${JSON.stringify(acked)}`);
      drained += items.length;
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  return { messages: drained, perSecond: drained / ((performance.now() - started) / 1000) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-grpc-"));
  const [ingressPort, pullPort, adminPort, grpcPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const spool = startSpool(dir, [
    `ingress { listen 127.0.0.1:${ingressPort} }`,
    `pull_api { listen 127.0.0.1:${pullPort}; auth token raw:bench; grpc_listen 127.0.0.1:${grpcPort} }`,
    `admin_api { listen 127.0.0.1:${adminPort} }`,
    `queue_limits { max_depth 10000000 }`,
    `observability { access_log off; runtime_log error }`,
    `/hooks/bench { pull { path /bench } }`,
  ]);
  const client = workerClient(`127.0.0.1:${grpcPort}`, "bench");
  const results: Record<"http" | "grpc", Drained[]> = { http: [], grpc: [] };
  try {
    await waitFor(`http://127.0.0.1:${adminPort}/healthz`, "GET");
    const drains = {
      http: () => drainHttp(`http://127.0.0.1:${pullPort}`),
      grpc: () => drainGrpc(client),
    };
    for (let round = 0; round < ROUNDS; round++) {
      const order = (round % 2 === 0 ? (["http", "grpc"] as const) : (["grpc", "http"] as const)).filter((kind) => PART === undefined || PART === kind);
      for (const kind of order) {
        const filled = await load(`http://127.0.0.1:${ingressPort}/hooks/bench`, MESSAGES);
        if (filled.ok < MESSAGES) throw new Error(`filling stored ${filled.ok} of ${MESSAGES} messages`);
        const clientCpu = process.cpuUsage();
        const drained = await withCpuPerUnit(spool.pid, drains[kind], (result: Drained) => result.messages);
        const { user, system } = process.cpuUsage(clientCpu);
        const clientUsPerMessage = (user + system) / drained.messages;
        if (drained.messages !== MESSAGES) throw new Error(`${kind} drained ${drained.messages} of ${MESSAGES}`);
        results[kind].push(drained);
        console.log(`round ${round + 1} ${kind.padEnd(4)} (${WORKERS} workers, batch ${BATCH}): ${fmt(drained.perSecond)} msg/s over ${drained.messages} messages${cpuNote(drained.cpuUsPerUnit, "msg")}, client CPU ${clientUsPerMessage.toFixed(1)} µs/msg`);
      }
    }
  } finally {
    client.close();
    await stopChildren([spool]);
    rmSync(dir, { recursive: true, force: true });
  }
  if (PART !== undefined) return;
  const best = (kind: "http" | "grpc") => Math.max(...results[kind].map((r) => r.perSecond));
  const ratio = best("grpc") / best("http");
  console.log(`drain HTTP Pull API loop (best of ${ROUNDS}): ${fmt(best("http"))} msg/s`);
  console.log(`drain gRPC worker service (best of ${ROUNDS}): ${fmt(best("grpc"))} msg/s`);
  console.log(`gRPC / HTTP: ${ratio.toFixed(2)} (target ≥ 1.00: ${ratio >= 1 ? "met" : "NOT met"})`);
}

await main();
