// Child process for sqlite-durability.test.ts. The parent kills it with SIGKILL at a random moment.
// (stdout to a pipe is synchronous on Linux, so a printed line reached the parent before the kill.)
//   enqueue mode: 50 concurrent callers enqueue single messages and print `stored <id>` the moment
//                 each enqueue resolves.
//   drain mode:   4 consumers dequeue and ack what the parent pre-filled and print `acked <id>` when
//                 each ack resolves, while 10 callers keep enqueuing, so deferred (ack) and durable
//                 (enqueue, dequeue) writes share group commits.
import { systemClock } from "../../runtime/time/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { message } from "./contract.js";

const [path, mode = "enqueue"] = process.argv.slice(2);
const store = await openStore({ backend: "sqlite", sqlitePath: path }, { clock: systemClock });
process.stdout.write("ready\n");
let next = 0;

async function enqueuer(): Promise<void> {
  for (;;) {
    const id = `d-${process.pid}-${next++}`;
    await store.enqueue([message(id, { payload: new Uint8Array(512).fill(7) })]);
    process.stdout.write(`stored ${id}\n`);
  }
}

async function consumer(): Promise<void> {
  for (;;) {
    const leased = await store.dequeue({ route: "/drain", batch: 8, leaseTtlMs: 600_000 });
    if (leased.length === 0) return;
    await store.ack(leased.map((m) => m.leaseId));
    process.stdout.write(leased.map((m) => `acked ${m.id}\n`).join(""));
  }
}

if (mode === "drain") await Promise.all([...Array.from({ length: 4 }, consumer), ...Array.from({ length: 10 }, enqueuer)]);
else await Promise.all(Array.from({ length: 50 }, enqueuer));
