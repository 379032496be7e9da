// Push delivery throughput at concurrency 20 to a local receiver answering 200, two ways in one run:
//   spool run: the built binary on SQLite with one push route. The 1 KB ingress load of the ingress
//              benchmark (autocannon) fills the route while the receiver holds the first 20 requests,
//              so ingress is measured alone; then the receiver lets go and the backlog's deliveries
//              per second (lease → POST → ack, attempts recorded) are printed beside the ingress rate.
//   in-process: the dispatcher against an O(1) in-memory queue beside a raw undici request loop at the
//              same concurrency to the same receiver: their ratio is the dispatcher's own overhead.
// Run: node dist/test/bench/push.bench.js   (SPOOL_BENCH_SECONDS, SPOOL_BENCH_PUSH_MESSAGES)
import { type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { Agent, request } from "undici";
import { createDispatcher, type AttemptRecord, type DeliveryQueue, type DequeueRequest, type Leased, type NackHow } from "../../runtime/delivery/dispatcher.js";
import { BODY, CONNECTIONS, fmt, freePort, load, startSpool, stopChildren, waitFor, type LoadResult } from "./load.js";

const concurrency = 20;
const messageCount = Number(process.env.SPOOL_BENCH_PUSH_MESSAGES ?? 20_000);
const body = Buffer.from(BODY);
const headers = { "Content-Type": "application/json", "User-Agent": "bench/1" };

/** A queue whose operations are O(1), so the figure measures delivery, not the fake store. */
class BenchQueue implements DeliveryQueue {
  private next = 0;
  private readonly leased = new Map<string, number>();
  acked = 0;
  failed = 0;
  private waiter?: () => void;
  constructor(private readonly total: number) {}

  async dequeue(req: DequeueRequest): Promise<Leased[]> {
    const items: Leased[] = [];
    while (items.length < req.batch && this.next < this.total) {
      const n = this.next++;
      const leaseId = `lease_${n}`;
      this.leased.set(leaseId, n);
      items.push({ leaseId, id: `evt_${n}`, attempt: 1, body, headers });
    }
    return items;
  }
  async ack(ids: readonly string[]): Promise<void> {
    for (const id of ids) if (this.leased.delete(id)) this.acked++;
    if (this.acked + this.failed >= this.total) this.waiter?.();
  }
  async nack(ids: readonly string[], _how: NackHow): Promise<void> {
    for (const id of ids) if (this.leased.delete(id)) this.failed++;
    if (this.acked + this.failed >= this.total) this.waiter?.();
  }
  async recordAttempt(_record: AttemptRecord): Promise<void> {}
  async waitReady(_route: string, _target: string, signal: AbortSignal): Promise<void> {
    await delay(50, undefined, { signal }).catch(() => {});
  }
  done(): Promise<void> {
    return this.acked + this.failed >= this.total ? Promise.resolve() : new Promise((resolve) => (this.waiter = resolve));
  }
}

async function viaDispatcher(url: string, count: number): Promise<number> {
  const queue = new BenchQueue(count);
  const dispatcher = createDispatcher(
    {
      routes: [{ route: "/bench", concurrency, targets: [{ kind: "http", target: url, url, timeoutMs: 10_000, retry: { maxRetries: 8, baseMs: 2_000, capMs: 120_000, jitter: 0.2 } }] }],
      egress: { allow: ["127.0.0.1"], deny: [], httpsOnly: false, redirects: false, dnsRebindProtection: true },
      lease: { minLeaseTtlMs: 30_000, leaseSlackMs: 5_000 },
    },
    { queue, clock: { now: () => Date.now(), sleep: (ms, signal) => delay(ms, undefined, { signal }) } },
  );
  const started = performance.now();
  dispatcher.start();
  await queue.done();
  const seconds = (performance.now() - started) / 1000;
  await dispatcher.stop({ drainMs: 5_000 });
  if (queue.failed > 0) throw new Error(`${queue.failed} deliveries failed`);
  return count / seconds;
}

async function viaRawUndici(url: string, count: number): Promise<number> {
  const agent = new Agent();
  let sent = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < count) {
        sent++;
        const response = await request(url, { method: "POST", body, headers: { ...headers, "X-Spool-Message-Id": `evt_${sent}`, "X-Spool-Attempt": "1" }, dispatcher: agent });
        await response.body.dump();
        if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return count / seconds;
}

/** `spool run` on SQLite with one push route to `receiverUrl`: its ingress rate, then its push rate. */
async function viaSpoolRun(receiverUrl: string): Promise<{ ingress: LoadResult; messages: number; deliveriesPerSecond: number }> {
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-push-"));
  const children: ChildProcess[] = [];
  try {
    const [ingressPort, adminPort, pullPort] = [await freePort(), await freePort(), await freePort()];
    children.push(
      startSpool(dir, [
        `ingress { listen 127.0.0.1:${ingressPort} }`,
        `admin_api { listen 127.0.0.1:${adminPort} }`,
        // The Pull API listens even without pull routes: on a free port, not the default :9443.
        `pull_api { listen 127.0.0.1:${pullPort} }`,
        `queue_limits { max_depth 10000000 }`,
        `observability { access_log off; runtime_log error }`,
        `defaults { egress { allow 127.0.0.1; https_only off } }`,
        // The held requests must outlast the ingress phase.
        `/hooks/push { deliver_concurrency ${concurrency}; deliver "${receiverUrl}" { timeout 120s } }`,
      ]),
    );
    await waitFor(`http://127.0.0.1:${adminPort}/healthz`, "GET");
    receiver.hold();
    const ingress = await load(`http://127.0.0.1:${ingressPort}/hooks/push`);
    const messages = ingress.ok;
    const started = performance.now();
    await receiver.release(messages);
    const deliveriesPerSecond = messages / ((performance.now() - started) / 1000);
    return { ingress, messages, deliveriesPerSecond };
  } finally {
    await stopChildren(children);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Answers 200. While held, requests to /spool wait unanswered (spool's 20 delivery slots fill and
 * its queue grows); release() answers them and resolves once `count` distinct messages arrived.
 */
class Receiver {
  private held: (() => void)[] | undefined;
  private readonly spoolIds = new Set<string>();
  private wanted = Infinity;
  private reached?: () => void;

  handle(path: string, messageId: string | undefined, answer: () => void): void {
    if (path !== "/spool") return answer();
    if (messageId) this.spoolIds.add(messageId);
    if (this.held) this.held.push(answer);
    else answer();
    if (this.spoolIds.size >= this.wanted) this.reached?.();
  }

  hold(): void {
    this.held = [];
    this.spoolIds.clear();
    this.wanted = Infinity;
  }

  release(count: number): Promise<void> {
    const waiting = this.held ?? [];
    this.held = undefined;
    const done = this.spoolIds.size >= count ? Promise.resolve() : new Promise<void>((resolve) => ((this.wanted = count), (this.reached = resolve)));
    for (const answer of waiting) answer();
    return done;
  }
}

const receiver = new Receiver();
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => receiver.handle(req.url ?? "", req.headers["x-spool-message-id"] as string | undefined, () => res.end("ok")));
});
server.keepAliveTimeout = 30_000;
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const url = `${origin}/hook`;

const spoolRun = await viaSpoolRun(`${origin}/spool`);

// Warm both paths (JIT, connection pools) before measuring.
await viaRawUndici(url, 2_000);
await viaDispatcher(url, 2_000);

const rounds = 3;
const raw: number[] = [];
const dispatched: number[] = [];
for (let i = 0; i < rounds; i++) {
  raw.push(await viaRawUndici(url, messageCount));
  dispatched.push(await viaDispatcher(url, messageCount));
}
server.close();

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rawRate = median(raw);
const dispatchRate = median(dispatched);
const { ingress } = spoolRun;
console.log(`push benchmark: concurrency ${concurrency}, 1 KB bodies, receiver answering 200 in the benchmark process`);
console.log(`  spool run ingress (SQLite, ${CONNECTIONS} connections, deliveries held): ${fmt(ingress.rps).padStart(7)} req/s, p99 ${ingress.p99Ms} ms, non-2xx ${ingress.non2xx}`);
console.log(`  spool run push (SQLite lease→POST→ack→attempt):       ${fmt(spoolRun.deliveriesPerSecond).padStart(7)} deliveries/s over ${fmt(spoolRun.messages)} messages`);
console.log(`  ratio push / ingress: ${(spoolRun.deliveriesPerSecond / ingress.rps).toFixed(2)}`);
console.log(`  in process, ${messageCount} messages × ${rounds} rounds (median):`);
console.log(`    raw undici request loop                   : ${fmt(rawRate).padStart(7)} req/s`);
console.log(`    dispatcher (in-memory queue, egress agent): ${fmt(dispatchRate).padStart(7)} deliveries/s`);
console.log(`    ratio dispatcher / raw: ${(dispatchRate / rawRate).toFixed(2)}`);
