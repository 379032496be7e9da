// Push delivery throughput: messages per second through the dispatcher (lease → POST → ack against an
// in-memory queue) at concurrency 20, beside a raw undici request loop at the same concurrency to the
// same receiver in the same run. The ratio is the dispatcher's overhead; the receiver shares the process.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import { Agent, request } from "undici";
import { createDispatcher, type AttemptRecord, type DeliveryQueue, type DequeueRequest, type Leased, type NackHow } from "../../runtime/delivery/dispatcher.js";

const concurrency = 20;
const messageCount = Number(process.env.SPOOL_BENCH_PUSH_MESSAGES ?? 20_000);
const body = Buffer.from(JSON.stringify({ event: "order.paid", id: 123456, amount: 4200, currency: "EUR", note: "x".repeat(300) }));
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

const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => res.end("ok"));
});
server.keepAliveTimeout = 30_000;
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

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
console.log(`push benchmark: ${messageCount} messages, concurrency ${concurrency}, ${rounds} rounds (median), receiver in-process`);
console.log(`  raw undici request loop : ${rawRate.toFixed(0).padStart(7)} req/s`);
console.log(`  dispatcher (lease→POST→ack, egress agent): ${dispatchRate.toFixed(0).padStart(7)} deliveries/s`);
console.log(`  ratio dispatcher / raw  : ${(dispatchRate / rawRate).toFixed(2)}`);
