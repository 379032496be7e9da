// Shared parts for the delivery tests: a real HTTP receiver on 127.0.0.1:0, an in-memory
// DeliveryQueue that behaves like the store contract, and a real-time clock.
import { createServer, type IncomingMessage, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import type { Clock } from "../../runtime/time/clock.js";
import type { AttemptRecord, DeliveryQueue, DequeueRequest, Leased, NackHow } from "../../runtime/delivery/dispatcher.js";
import type { EgressPolicy } from "../../runtime/delivery/egress.js";
import { DEFAULTS } from "../../compiler/index.js";

/** What the compiler resolves for a `sign` block that sets only its secrets (compiler/defaults.ts). */
export const HMAC_SIGNING = { selection: "newest_valid", signatureHeader: DEFAULTS.signatureHeader, timestampHeader: DEFAULTS.timestampHeader } as const;
export const WEBHOOKS_SIGNING = { selection: "newest_valid" } as const;

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly body: Buffer;
}

export interface Receiver {
  readonly url: string;
  readonly port: number;
  readonly requests: ReceivedRequest[];
  close(): Promise<void>;
}

export type Handler = (request: ReceivedRequest, res: ServerResponse, index: number) => unknown;

export async function startReceiver(handler: Handler = (_req, res) => res.end("ok")): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const received = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) };
      requests.push(received);
      void handler(received, res, requests.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Plain HTTP to 127.0.0.1 needs these (docs/decisions.md D36). */
export const localEgress: EgressPolicy = { allow: [], deny: [], httpsOnly: false, redirects: false, dnsRebindProtection: false };

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => delay(ms, undefined, { signal }),
};

export interface FakeMessage {
  id: string;
  route: string;
  target: string;
  attempt: number;
  body: Buffer;
  headers: Record<string, string>;
  state: "queued" | "leased" | "delivered" | "dead";
  readyAtMs: number;
  leaseId?: string;
  deadReason?: string;
  nacks: NackHow[];
}

/** An in-memory DeliveryQueue with the store's semantics: lease increments attempt, nack delays, dead is final. */
export class FakeQueue implements DeliveryQueue {
  readonly messages: FakeMessage[] = [];
  readonly attempts: AttemptRecord[] = [];
  readonly dequeues: DequeueRequest[] = [];
  private nextLease = 1;
  private waiters = new Set<() => void>();

  enqueue(route: string, target: string, id: string, body: Buffer | string, headers: Record<string, string> = {}): FakeMessage {
    const message: FakeMessage = { id, route, target, attempt: 0, body: Buffer.from(body), headers, state: "queued", readyAtMs: 0, nacks: [] };
    this.messages.push(message);
    this.notify();
    return message;
  }

  get(id: string, target?: string): FakeMessage {
    const found = this.messages.find((m) => m.id === id && (target === undefined || m.target === target));
    if (!found) throw new Error(`no message ${id}`);
    return found;
  }

  async dequeue(request: DequeueRequest, signal: AbortSignal): Promise<Leased[]> {
    this.dequeues.push(request);
    if (signal.aborted) return [];
    const now = Date.now();
    const ready = this.messages.filter((m) => m.route === request.route && m.target === request.target && m.state === "queued" && m.readyAtMs <= now).slice(0, request.batch);
    return ready.map((m) => {
      m.state = "leased";
      m.attempt++;
      m.leaseId = `lease_${this.nextLease++}`;
      return { leaseId: m.leaseId, id: m.id, attempt: m.attempt, body: m.body, headers: m.headers };
    });
  }

  async ack(leaseIds: readonly string[]): Promise<void> {
    for (const m of this.byLease(leaseIds)) {
      m.state = "delivered";
      m.leaseId = undefined;
    }
  }

  async nack(leaseIds: readonly string[], how: NackHow): Promise<void> {
    for (const m of this.byLease(leaseIds)) {
      m.nacks.push(how);
      m.leaseId = undefined;
      if ("dead" in how) {
        m.state = "dead";
        m.deadReason = how.reason;
      } else {
        m.state = "queued";
        m.readyAtMs = Date.now() + how.delayMs;
      }
    }
    this.notify();
  }

  async recordAttempt(record: AttemptRecord): Promise<void> {
    this.attempts.push(record);
  }

  waitReady(_route: string, _target: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      // Delayed retries become ready with time, not with an event: poll briefly like a store tick.
      const timer = setTimeout(done, 10);
      this.waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private byLease(leaseIds: readonly string[]): FakeMessage[] {
    return this.messages.filter((m) => m.leaseId !== undefined && leaseIds.includes(m.leaseId));
  }
}

/** Polls `predicate` every 5 ms until it holds; fails after `timeoutMs` with `what`. */
export async function waitFor(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(5);
  }
}
