// A PostgreSQL host that accepts connections but never answers (a hung server, a firewall dropping
// packets) fails the store's calls `unavailable` after the connect timeout, 5 s by default instead of
// the driver's 30, and the store serves again once the host answers. A TCP relay in front of the
// test database plays the host: it forwards until it is told to go silent.
import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TestClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { connectTimeoutOption, DEFAULT_CONNECT_TIMEOUT_S } from "../../runtime/store/postgres/connect.js";
import { StoreError } from "../../runtime/store/store.js";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";
import { message } from "./contract.js";

const dsn = postgresTestDsn();
const test = suite("postgres: connect timeout");

test("the default applies unless the DSN or PGCONNECT_TIMEOUT names one", () => {
  assert.equal(connectTimeoutOption("postgres://u@h:5432/db"), { connect_timeout: DEFAULT_CONNECT_TIMEOUT_S });
  assert.equal(connectTimeoutOption("postgres://u@h:5432/db?connect_timeout=12"), {});
  const saved = process.env.PGCONNECT_TIMEOUT;
  process.env.PGCONNECT_TIMEOUT = "12";
  try {
    assert.equal(connectTimeoutOption("postgres://u@h:5432/db"), {});
  } finally {
    if (saved === undefined) delete process.env.PGCONNECT_TIMEOUT;
    else process.env.PGCONNECT_TIMEOUT = saved;
  }
});

test("a database that refuses the connection at startup is said to be unreachable, not lost", async () => {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  try {
    await openStore({ backend: "postgres", postgresDsn: `postgres://postgres@127.0.0.1:${port}/spool`, postgresSchema: "spool" }, { clock: new TestClock() });
    assert.unreachable("the store opened without a database");
  } catch (error) {
    assert.instance(error, StoreError);
    assert.is((error as StoreError).code, "unavailable");
    assert.match((error as StoreError).message, /^cannot prepare PostgreSQL schema spool: cannot connect to PostgreSQL \(.*ECONNREFUSED.*\)$/);
  }
});

/** Forwards to `target` until silence(): then drops every relayed session and leaves new ones unanswered. */
class Relay {
  private silent = false;
  private readonly sockets = new Set<Socket>();
  private constructor(private readonly server: Server) {}

  static async start(target: URL): Promise<Relay> {
    const server = createServer();
    const relay = new Relay(server);
    server.on("connection", (client) => {
      relay.track(client);
      if (relay.silent) return;
      const upstream = connect(Number(target.port || 5432), target.hostname);
      relay.track(upstream);
      client.pipe(upstream).pipe(client);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    return relay;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  silence(): void {
    this.silent = true;
    for (const socket of this.sockets) socket.destroy();
  }

  resume(): void {
    this.silent = false;
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => this.sockets.delete(socket));
  }
}

if (!dsn) {
  reportSkipped("postgres: connect timeout", 1, "SPOOL_TEST_POSTGRES_DSN is not set");
} else {
  const schemas = new PgSchemas(dsn, "spool_connect_timeout");

  test("a host that stops answering fails an enqueue unavailable within the connect timeout, and the store serves again", async () => {
    const relay = await Relay.start(new URL(dsn));
    const viaRelay = new URL(dsn);
    viaRelay.hostname = "127.0.0.1";
    viaRelay.port = String(relay.port);
    const store = await openStore(
      { backend: "postgres", postgresDsn: viaRelay.toString(), postgresSchema: schemas.next(), postgresPoolSize: 2 },
      { clock: new TestClock() },
    );
    try {
      await store.enqueue([message("before")]);
      relay.silence();
      // Let the pool see its sessions close, so the next call opens a new one into the silence.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = Date.now();
      const error = await store.enqueue([message("during")]).then(
        () => null,
        (caught: unknown) => caught,
      );
      const waitedS = (Date.now() - started) / 1000;
      assert.instance(error, StoreError);
      assert.is((error as StoreError).code, "unavailable");
      // The driver's own default would hold the call 30 s; the bound leaves room for a loaded machine.
      assert.ok(waitedS < 20, `failed after ${waitedS.toFixed(1)} s, not within the ${DEFAULT_CONNECT_TIMEOUT_S} s connect timeout`);

      relay.resume();
      await store.enqueue([message("after")]);
      const stored = await store.getMessages(["before", "during", "after"]);
      assert.equal(stored.map((m) => m.id).sort(), ["after", "before"]);
    } finally {
      relay.resume();
      await store.close();
      await relay.close();
      await schemas.dropAll();
    }
  });
}

test.run();
