// The worker library (client/, `spool/client`) against the built `spool run` in a child process:
// concurrency, lease renewal, retries, a lost lease, stop() under load, the SSE transport, payload
// decoding, transport errors, and worker processes stopped with SIGTERM (the example included).
import { spawn } from "node:child_process";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createWorker, LeaseLostError, PullClient, PullError, type Message, type WorkerEvent } from "../../client/index.js";
import { call, eventually } from "../app/helpers/http.js";
import { freePort, spawnSpool, stopSpool, waitHealthy, type SpoolProcess } from "../app/helpers/spool-process.js";
import { freePorts, spoolfileText, urls, writeSpoolfile } from "../app/helpers/spoolfile.js";
import { repoPath } from "../helpers/repo.js";
import { makeTempDir } from "../helpers/temp-dir.js";

const ENDPOINTS = ["conc", "slow", "retry", "lost", "stop", "sse", "ssestop", "decode", "sigterm", "example"];
const TOKEN = "pull-token";
const temp = makeTempDir("client-worker");
let spool: SpoolProcess;
let base: ReturnType<typeof urls>;

const test = suite("worker library against spool run");

test.before(async () => {
  const ports = await freePorts();
  base = urls(ports);
  const routes = ENDPOINTS.map((name) => `/hooks/${name} { pull { path /${name} } }`).join("\n");
  const config = writeSpoolfile(temp.path, spoolfileText(ports, routes));
  spool = spawnSpool(["run", "--config", config, "--db", join(temp.path, "spool.db")]);
  await waitHealthy(spool, base.admin);
});

test.after(async () => {
  await stopSpool(spool);
  temp.cleanup();
});

async function ingest(endpoint: string, count: number, contentType = "application/json"): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const reply = await call(`${base.ingress}/hooks/${endpoint}`, { body: JSON.stringify({ n: i }), headers: { "content-type": contentType } });
    assert.is(reply.status, 202, reply.text);
    ids.push(reply.json.ids[0]);
  }
  return ids;
}

/** What is left on an endpoint: every message a dequeue can lease now (leased for a minute). */
async function leftover(endpoint: string): Promise<string[]> {
  const client = new PullClient({ url: base.pull, token: TOKEN, endpoint: `/${endpoint}` });
  const ids: string[] = [];
  for (;;) {
    const messages = await client.dequeue({ batch: 100, leaseTtl: 60_000 });
    if (messages.length === 0) break;
    ids.push(...messages.map((m) => m.id));
  }
  await client.close();
  return ids;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A handler that takes `ms` per message, noting the ids it handled and the most it ran at once. */
function countingHandler(ms: number): { done: string[]; handler: (message: Message) => Promise<void>; readonly most: number } {
  let running = 0;
  let most = 0;
  const done: string[] = [];
  const handler = async (message: Message) => {
    most = Math.max(most, ++running);
    await sleep(ms);
    running--;
    done.push(message.id);
  };
  return {
    done,
    handler,
    get most() {
      return most;
    },
  };
}

test("at most `concurrency` handlers run at once, and every message is acked", async () => {
  const ids = await ingest("conc", 40);
  const counting = countingHandler(15);
  const { done, handler } = counting;
  const worker = createWorker({
    url: base.pull,
    token: TOKEN,
    endpoint: "/conc",
    concurrency: 4,
    handler,
  });
  await eventually(() => (done.length >= 40 ? true : undefined), 20_000, "40 messages handled");
  await worker.stop();
  const { most } = counting;
  assert.is(most, 4);
  assert.equal([...done].sort(), [...ids].sort());
  assert.equal(await leftover("conc"), []);
});

test("a slow handler keeps its lease through three extension periods", async () => {
  const [id] = await ingest("slow", 1);
  const events: WorkerEvent[] = [];
  const other = new PullClient({ url: base.pull, token: TOKEN, endpoint: "/slow" });
  const stolen: string[] = [];
  let extendedWhileRunning = 0;
  let running = false;
  const worker = createWorker({
    url: base.pull,
    token: TOKEN,
    endpoint: "/slow",
    leaseTtl: 600, // renewed every 200 ms
    onEvent: (event) => {
      events.push(event);
      if (event.type === "extended" && running) extendedWhileRunning += event.count;
    },
    handler: async (_message, { signal }) => {
      running = true;
      // Five lease periods: without renewal the lease would run out and another consumer get it.
      for (let i = 0; i < 10; i++) {
        await sleep(300);
        stolen.push(...(await other.dequeue()).map((m) => m.id));
      }
      running = false;
      assert.not.ok(signal.aborted);
    },
  });
  await eventually(() => (events.some((e) => e.type === "completed") ? true : undefined), 15_000, "the slow message completed");
  await worker.stop();
  await other.close();
  assert.ok(extendedWhileRunning >= 3, `extended ${extendedWhileRunning} times`);
  assert.equal(stolen, [], "no other consumer got the message while it was held");
  assert.not.ok(events.some((e) => e.type === "lease_lost"));
  assert.equal(events.filter((e) => e.type === "completed").map((e) => (e as { message: Message }).message.id), [id]);
  assert.equal(await leftover("slow"), []);
});

test("a handler that throws is nacked with the retry delay and retried", async () => {
  const [id] = await ingest("retry", 1);
  const attempts: number[] = [];
  const failures: WorkerEvent[] = [];
  const delays: number[] = [];
  const worker = createWorker({
    url: base.pull,
    token: TOKEN,
    endpoint: "/retry",
    retryDelay: (attempt) => {
      delays.push(attempt);
      return 100;
    },
    onEvent: (event) => event.type === "failed" && failures.push(event),
    handler: (message) => {
      attempts.push(message.attempt);
      if (message.attempt < 3) throw new Error(`boom ${message.attempt}`);
    },
  });
  await eventually(() => (attempts.length >= 3 ? true : undefined), 10_000, "three attempts");
  await worker.stop();
  assert.equal(attempts, [1, 2, 3]);
  assert.equal(delays, [1, 2]);
  assert.is(failures.length, 2);
  assert.is((failures[0] as { error: Error }).error.message, "boom 1");
  assert.equal(await leftover("retry"), [], `${id} acked on the third attempt`);
});

test("a lease that cannot be renewed aborts the handler's signal", async () => {
  await ingest("lost", 1);
  const outsider = new PullClient({ url: base.pull, token: TOKEN, endpoint: "/lost" });
  let abortReason: unknown;
  const lost: WorkerEvent[] = [];
  const worker = createWorker({
    url: base.pull,
    token: TOKEN,
    endpoint: "/lost",
    leaseTtl: 600,
    onEvent: (event) => event.type === "lease_lost" && lost.push(event),
    handler: async (message, { signal }) => {
      // Someone else settles the lease: the next renewal is refused.
      await outsider.ack(message.leaseId);
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      abortReason = signal.reason;
    },
  });
  await eventually(() => (abortReason !== undefined ? true : undefined), 10_000, "the signal aborted");
  await worker.stop();
  await outsider.close();
  assert.instance(abortReason, LeaseLostError);
  assert.is((abortReason as LeaseLostError).reason, "lease_not_found");
  assert.is(lost.length, 1);
});

test("stop() under load loses nothing and hands nothing acked out again", async () => {
  const ids = await ingest("stop", 300);
  const first = new Map<string, number>();
  const completed = new Set<string>();
  let abandoned = -1;
  const worker = createWorker({
    url: base.pull,
    token: TOKEN,
    endpoint: "/stop",
    concurrency: 16,
    onEvent: (event) => {
      if (event.type === "completed") completed.add(event.message.id);
      if (event.type === "stopped") abandoned = event.abandoned;
    },
    handler: async (message) => {
      first.set(message.id, (first.get(message.id) ?? 0) + 1);
      await sleep(Math.floor(Math.random() * 30));
    },
  });
  await eventually(() => (completed.size >= 100 ? true : undefined), 20_000, "100 handled");
  await worker.stop({ timeout: 5_000 });
  assert.is(abandoned, 0, "every running handler finished within the deadline");
  assert.ok(completed.size < 300, "stopped under load");
  assert.equal(new Set(first.keys()), completed, "every message handled was completed and acked");
  // Everything not handled is back in the queue at once, not held by a lease.
  const rest = await leftover("stop");
  for (const id of rest) assert.not.ok(completed.has(id), `${id} was acked and handed out again`);
  assert.equal([...completed, ...rest].sort(), [...ids].sort(), "nothing lost");
});

test("the SSE transport: messages handled with concurrency respected, then a clean stop", async () => {
  const ids = await ingest("sse", 30);
  const counting = countingHandler(10);
  const { done, handler } = counting;
  const worker = createWorker({
    url: base.pull,
    token: TOKEN,
    endpoint: "/sse",
    transport: "sse",
    concurrency: 3,
    handler,
  });
  await eventually(() => (done.length >= 30 ? true : undefined), 20_000, "30 messages over SSE");
  // A message ingested while the stream waits is delivered through it.
  const [late] = await ingest("sse", 1);
  await eventually(() => (done.includes(late) ? true : undefined), 10_000, "the late message");
  await worker.stop();
  const { most } = counting;
  assert.ok(most <= 3 && most >= 2, `at most 3 at once, saw ${most}`);
  assert.equal([...done].sort(), [...ids, late].sort());
  assert.equal(await leftover("sse"), []);
});

test("an SSE worker stopped under load loses nothing: what was in the connection comes back after its lease", async () => {
  const ids = await ingest("ssestop", 120);
  const completed = new Set<string>();
  const worker = createWorker({
    url: base.pull,
    token: TOKEN,
    endpoint: "/ssestop",
    transport: "sse",
    concurrency: 4,
    leaseTtl: 1_000,
    onEvent: (event) => event.type === "completed" && completed.add(event.message.id),
    handler: () => sleep(5),
  });
  await eventually(() => (completed.size >= 30 ? true : undefined), 20_000, "30 handled");
  await worker.stop();
  assert.ok(completed.size < 120, "stopped under load");
  // The rest: queued at once, or leased in the closed connection until their one-second lease ends.
  const rest = new Set<string>();
  await eventually(async () => {
    for (const id of await leftover("ssestop")) rest.add(id);
    return completed.size + rest.size >= 120 ? true : undefined;
  }, 10_000, "every message back");
  for (const id of rest) assert.not.ok(completed.has(id), `${id} was acked and handed out again`);
  assert.equal([...completed, ...rest].sort(), [...ids].sort(), "nothing lost");
});

test("payloads are decoded by content type with the raw bytes kept; PullClient settles report conflicts", async () => {
  await ingest("decode", 1, "application/json");
  await call(`${base.ingress}/hooks/decode`, { body: "plain words", headers: { "content-type": "text/plain; charset=utf-8" } });
  await call(`${base.ingress}/hooks/decode`, { body: Buffer.from([0, 1, 2, 255]), headers: { "content-type": "application/octet-stream" } });
  const client = new PullClient({ url: base.pull, token: TOKEN, endpoint: "/decode" });
  const [json, text, bytes] = await client.dequeue({ batch: 3 });
  assert.equal(json.payload, { n: 0 });
  assert.is(json.raw.toString(), '{"n":0}');
  assert.is(json.contentType, "application/json");
  assert.is(text.payload, "plain words");
  assert.instance(bytes.payload, Buffer);
  assert.equal([...bytes.raw], [0, 1, 2, 255]);
  assert.instance(json.leaseUntil, Date);
  assert.equal(await client.extend([json.leaseId, text.leaseId], { leaseTtl: 60_000 }), { settled: 2, conflicts: [] });
  assert.equal(await client.ack([json.leaseId, text.leaseId, bytes.leaseId]), { settled: 3, conflicts: [] });
  const again = await client.ack(json.leaseId);
  assert.is(again.conflicts.length, 0, "a repeated ack of the same lease is answered as done");
  const unknown = await client.nack("lease_unknown");
  assert.equal(unknown.conflicts, [{ leaseId: "lease_unknown", reason: "lease_not_found" }]);
  const wrongToken = new PullClient({ url: base.pull, token: "nope", endpoint: "/decode" });
  const refused = await wrongToken.dequeue().catch((error) => error);
  assert.instance(refused, PullError);
  assert.equal([refused.status, refused.code, refused.transient], [401, "unauthorized", false]);
  await client.close();
  await wrongToken.close();
});

test("transport errors back off with growing delays and never crash; stop() still resolves", async () => {
  const port = await freePort(); // nothing listens there
  const retries: number[] = [];
  const worker = createWorker({
    url: `http://127.0.0.1:${port}`,
    token: TOKEN,
    endpoint: "/conc",
    handler: () => {},
    onEvent: (event) => event.type === "transport_error" && retries.push(event.retryInMs ?? -1),
  });
  await eventually(() => (retries.length >= 4 ? true : undefined), 10_000, "four failed dequeues");
  await worker.stop();
  assert.ok(retries.every((ms) => ms > 0));
  // Jittered within 50–100 % of 100, 200, 400, 800 ms.
  assert.ok(retries[3] >= 400 && retries[3] <= 800, `fourth retry after ${retries[3]} ms`);
});

interface Child {
  output(): string;
  exited: Promise<number | null>;
  kill(): void;
}

function spawnWorker(script: string, endpoint: string): Child {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, SPOOL_PULL_URL: base.pull, SPOOL_PULL_TOKEN: TOKEN, SPOOL_ENDPOINT: endpoint },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  return { output: () => output, exited: new Promise((resolve) => child.once("exit", (code) => resolve(code))), kill: () => child.kill("SIGTERM") };
}

test("SIGTERM to a worker process drains: running handlers finish and are acked, the rest stay queued", async () => {
  const ids = await ingest("sigterm", 12);
  const child = spawnWorker(repoPath("dist/test/client/fixtures/slow-worker.js"), "/sigterm");
  await eventually(() => ((child.output().match(/^start /gm) ?? []).length >= 4 ? true : undefined), 10_000, "four handlers started");
  child.kill();
  assert.is(await child.exited, 0, child.output());
  const out = child.output();
  const started = [...out.matchAll(/^start (\S+)$/gm)].map((m) => m[1]);
  const finished = [...out.matchAll(/^done (\S+)$/gm)].map((m) => m[1]);
  assert.ok(out.trimEnd().endsWith("stopped"), out);
  assert.equal([...finished].sort(), [...started].sort(), "every started handler finished before the exit");
  const rest = await leftover("sigterm");
  for (const id of finished) assert.not.ok(rest.includes(id), `${id} finished but was not acked`);
  assert.equal([...finished, ...rest].sort(), [...ids].sort(), "nothing lost");
});

test("examples/worker.ts (built from `spool/client`) handles messages and exits on SIGTERM", async () => {
  const ids = await ingest("example", 5);
  const child = spawnWorker(repoPath("dist/examples/worker.js"), "/example");
  await eventually(() => (ids.every((id) => child.output().includes(`handled ${id}`)) ? true : undefined), 10_000, "five messages handled");
  child.kill();
  assert.is(await child.exited, 0, child.output());
  assert.equal(await leftover("example"), []);
});

test.run();
