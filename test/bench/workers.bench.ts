// Draining a pull route on SQLite, three ways in one run, each after its own fill of the same route
// so each starts from the same backlog (the 1 KB ingress body):
//   HTTP loop: the hand-written worker loop: dequeue batch 32 → ack the 32 → again (one request at a time).
//   HTTP ×4:   four such loops at once (the drain of the ingress benchmark), for reference.
//   SSE:       one stream (batch 32) read with PullClient.stream, acks batched while one is in flight.
//   library:   createWorker from spool/client, concurrency 32, a handler that returns at once.
// Targets (issue 30): library ≥ 0.9 × HTTP loop, SSE ≥ HTTP loop. The machine is shared: figures are rough.
// Run: npm run bench -- workers   (SPOOL_BENCH_WORKER_MESSAGES, default 60000)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "undici";
import { createWorker, PullClient } from "../../client/index.js";
import { fmt, freePort, load, startSpool, stopChildren, waitFor } from "./load.js";

const messages = Number(process.env.SPOOL_BENCH_WORKER_MESSAGES ?? 60_000);
const TOKEN = "bench-token";
const BATCH = 32;

const dir = mkdtempSync(join(tmpdir(), "spool-bench-workers-"));
const ingressPort = await freePort();
const pullPort = await freePort();
const adminPort = await freePort();
const child = startSpool(dir, [
  `ingress { listen 127.0.0.1:${ingressPort} }`,
  `pull_api { listen 127.0.0.1:${pullPort}; auth token raw:${TOKEN}; max_wait 30s }`,
  `admin_api { listen 127.0.0.1:${adminPort} }`,
  `observability { access_log off; runtime_log error }`,
  `queue_limits { max_depth 10000000 }`,
  `/hooks/jobs { pull { path /jobs } }`,
]);
const pullBase = `http://127.0.0.1:${pullPort}`;

async function fill(): Promise<void> {
  const result = await load(`http://127.0.0.1:${ingressPort}/hooks/jobs`, messages);
  if (result.ok !== messages) throw new Error(`filled ${result.ok} of ${messages} (${result.non2xx} refused)`);
}

/** The hand-written loop: one dequeue of 32, one ack of their lease ids, until the route is empty; `loops` of them at once. */
async function httpLoops(loops: number): Promise<number> {
  const agent = new Agent({ connections: loops });
  const post = async (op: string, body: unknown) => {
    const response = await request(`${pullBase}/jobs/${op}`, {
      method: "POST",
      dispatcher: agent,
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.body.text();
    return text ? JSON.parse(text) : undefined;
  };
  let drained = 0;
  const loop = async () => {
    for (;;) {
      const { items } = await post("dequeue", { batch: BATCH, lease_ttl: "1m" });
      if (items.length === 0) break;
      await post("ack", { lease_ids: items.map((item: { lease_id: string }) => item.lease_id) });
      drained += items.length;
    }
  };
  await Promise.all(Array.from({ length: loops }, loop));
  await agent.close();
  return drained;
}

/** One stream of batch 32; acks gathered while one is on its way, sent together. */
async function sse(): Promise<number> {
  const client = new PullClient({ url: pullBase, token: TOKEN, endpoint: "/jobs" });
  const stop = new AbortController();
  let pending: string[] = [];
  let acked = 0;
  let acking: Promise<void> | null = null;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const flush = async () => {
    while (pending.length > 0) {
      const ids = pending.splice(0, 100);
      const result = await client.ack(ids);
      if (result.conflicts.length > 0) throw new Error(`${result.conflicts.length} acks refused`);
      acked += ids.length;
    }
    acking = null;
    if (acked >= messages) done();
  };
  const reading = (async () => {
    try {
      for await (const message of client.stream({ batch: BATCH, leaseTtl: 60_000, signal: stop.signal })) {
        pending.push(message.leaseId);
        acking ??= new Promise<void>((resolve) => setImmediate(resolve)).then(flush);
      }
    } catch (error) {
      if (!stop.signal.aborted) throw error;
    }
  })();
  await finished;
  stop.abort();
  await reading;
  await client.close();
  pending = [];
  return acked;
}

/** Resolves when the last handler completed, with the worker's stop() (which flushes the last acks) to run after timing. */
async function library(): Promise<() => Promise<void>> {
  let completed = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const worker = createWorker({
    url: pullBase,
    token: TOKEN,
    endpoint: "/jobs",
    concurrency: BATCH,
    leaseTtl: 60_000,
    handler: () => {},
    onEvent: (event) => {
      if (event.type === "completed" && ++completed >= messages) done();
    },
  });
  await finished;
  return () => worker.stop();
}

async function measure(name: string, drain: () => Promise<unknown>): Promise<number> {
  await fill();
  const start = performance.now();
  const after = await drain();
  const end = performance.now();
  if (typeof after === "function") await after();
  // Every message acked: nothing is left to lease.
  const checker = new PullClient({ url: pullBase, token: TOKEN, endpoint: "/jobs" });
  const left = await checker.dequeue({ batch: 10 });
  await checker.close();
  if (left.length > 0) throw new Error(`${name} left messages behind`);
  const rate = (messages * 1000) / (end - start);
  process.stdout.write(`${name.padEnd(10)} ${fmt(rate)} msg/s  (${fmt(messages)} messages in ${((end - start) / 1000).toFixed(1)} s)\n`);
  return rate;
}

try {
  await waitFor(`http://127.0.0.1:${adminPort}/healthz`, "GET");
  process.stdout.write(`draining ${fmt(messages)} queued 1 KB messages on SQLite, each way after its own fill\n`);
  const http = await measure("HTTP loop", () => httpLoops(1));
  const stream = await measure("SSE", sse);
  const lib = await measure("library", library);
  await measure("HTTP ×4", () => httpLoops(4));
  const verdict = (ok: boolean) => (ok ? "MET" : "MISSED");
  process.stdout.write(`library / HTTP loop ${(lib / http).toFixed(2)} (target ≥ 0.9: ${verdict(lib >= 0.9 * http)})\n`);
  process.stdout.write(`SSE / HTTP loop ${(stream / http).toFixed(2)} (target ≥ 1: ${verdict(stream >= http)})\n`);
} finally {
  await stopChildren([child]);
  rmSync(dir, { recursive: true, force: true });
}
