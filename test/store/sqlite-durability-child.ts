// Child process for sqlite-durability.test.ts: 50 concurrent callers enqueue single messages into
// the SQLite store at argv[2] and print each id the moment its enqueue resolves. The parent kills
// this process with SIGKILL at a random moment. (stdout to a pipe is synchronous on Linux, so a
// printed line reached the parent before the kill.)
import { systemClock } from "../../runtime/clock.js";
import { openStore } from "../../runtime/store/open.js";
import { message } from "./contract.js";

const path = process.argv[2];
const store = await openStore({ backend: "sqlite", sqlitePath: path }, { clock: systemClock });
process.stdout.write("ready\n");
let next = 0;
async function caller(): Promise<void> {
  for (;;) {
    const id = `d-${process.pid}-${next++}`;
    await store.enqueue([message(id, { payload: new Uint8Array(512).fill(7) })]);
    process.stdout.write(id + "\n");
  }
}
await Promise.all(Array.from({ length: 50 }, caller));
