// SSE streams on two instances sharing one PostgreSQL database: a stream on one wakes for a message
// ingested on the other (the NOTIFY wake-up long polls use), and streams on both are competing
// consumers of the one queue.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createApp, type SpoolApp } from "../../runtime/app/app.js";
import { PgSchemas } from "../helpers/pg-schema.js";
import { postgresTestDsn, reportSkipped } from "../helpers/skip.js";
import { call, eventually } from "./helpers/http.js";
import { buildConfig, pullRoute } from "./helpers/ir.js";
import { openStream } from "./helpers/sse.js";

const SUITE = "Pull API SSE stream on two instances sharing PostgreSQL";
const dsn = postgresTestDsn();

if (!dsn) {
  reportSkipped(SUITE, 2, "SPOOL_TEST_POSTGRES_DSN is not set");
  suite(`${SUITE} (skipped)`).run();
} else {
  const schemas = new PgSchemas(dsn, "spool_sse");
  const schema = schemas.next();
  const apps: SpoolApp[] = [];
  const bases: { ingress: string; pull: string }[] = [];
  const test = suite(SUITE);

  test.before(async () => {
    for (let i = 0; i < 2; i++) {
      // An hour between keepalives: only a wake-up can bring an event.
      const config = buildConfig({
        routes: [pullRoute("/hooks/a", "/a")],
        backend: "postgres",
        patch: (c) => (c.pullApi = { ...c.pullApi, sseKeepaliveMs: 3_600_000 }),
      });
      const app = createApp(config, { version: "0.1.0", storeLocation: { postgresDsn: dsn, postgresSchema: schema } });
      const { addresses } = await app.start();
      const url = (name: string) => `http://127.0.0.1:${addresses.find((a) => a.name.split("+").includes(name))!.port}`;
      apps.push(app);
      bases.push({ ingress: url("ingress"), pull: url("pull") });
    }
  });

  test.after(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    await schemas.dropAll();
  });

  test("a stream on one instance wakes for a message ingested on the other", async () => {
    const reader = await openStream(`${bases[0].pull}/a/stream`, "pull-token");
    try {
      const posted = await call(`${bases[1].ingress}/hooks/a`, { body: "cross" });
      assert.is(posted.status, 202);
      const [event] = await reader.waitForEvents(1, 5_000);
      assert.is(JSON.parse(event.data).id, posted.json.ids[0]);
      assert.equal(reader.comments, []);
    } finally {
      reader.close();
    }
  });

  test("streams on both instances share the queue: each message goes to one of them", async () => {
    const readers = await Promise.all(bases.map((b) => openStream(`${b.pull}/a/stream?batch=4&lease_ttl=5m`, "pull-token")));
    try {
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) ids.push((await call(`${bases[i % 2].ingress}/hooks/a`, { body: `m${i}` })).json.ids[0]);
      const received = () => readers.flatMap((r) => r.events.filter((e) => e.event === "message").map((e) => JSON.parse(e.data).id as string));
      await eventually(() => (received().length >= 40 ? true : undefined), 15_000, "40 events");
      assert.is(received().length, 40);
      assert.equal([...new Set(received())].sort(), [...ids].sort());
    } finally {
      for (const r of readers) r.close();
    }
  });

  test.run();
}
