// Patches crashes in the postgres driver (postgres.js 3.4.9, the newest release), each reproduced
// by test/store/postgres-killed-under-load.test.ts, which kills the store's sessions under load.
//
// 1. A closed socket's flush (upstream porsager/postgres#1154 and #1208; fixes proposed in
//    #1168/#1176/#1209, not released). A small write is flushed on a later event-loop turn
//    (setImmediate); when the connection closes first (a session killed, a network drop under
//    load), the flush finds the socket gone and throws a TypeError no caller can catch, and the
//    whole process exits. Teardown also left the flush timer set, so a reconnected session could
//    never flush a small write again. Patched: the flush of a closed connection drops its bytes and
//    fails its queries with CONNECTION_CLOSED (a catchable error: the store answers 503 and the
//    next call reconnects), and teardown resets the timer and the pending bytes.
// 2. A session killed while it starts up (upstream #1192, #1205, #1223; open). A new connection
//    first reads the server's array types (`fetch_types`), a query the driver starts without
//    handling its failure: killed then, its rejection is unhandled and Node exits. The driver also
//    kept that query and its error across the reconnect it then makes, and failed the caller's
//    first query with the dead session's error. Patched: the startup read's own promise gets a
//    handler (whatever failed it, the driver already fails or retries the caller's query with the
//    same error, so nothing is hidden), and a connection closed during startup forgets its internal
//    query and error before it reconnects.
//
// Run by `npm install`/`npm ci` (postinstall). Each edit is applied once (it is skipped when its
// result is already there); a driver whose code differs is left alone with a warning.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const MARKER = "/* spool: patched closed-socket flush */";
export const STARTUP_MARKER = "/* spool: patched startup close */";
// The copy `import postgres from "postgres"` loads (its package.json "exports": import → src/).
const file = fileURLToPath(new URL("../node_modules/postgres/src/connection.js", import.meta.url));
if (!existsSync(file)) process.exit(0); // not installed: nothing to patch

const edits = [
  [
    "  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)",
    `  function nextWrite(fn) {\n    ${MARKER}\n    if (!socket) {\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      return false\n    }\n    const x = socket.write(chunk, fn)`,
  ],
  ["    error(Errors.connection('CONNECTION_DESTROYED', options))\n\n    clearImmediate(nextWriteTimer)\n", "    error(Errors.connection('CONNECTION_DESTROYED', options))\n\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n"],
  ["    incomings = null\n    clearImmediate(nextWriteTimer)\n", "    incomings = null\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n"],
  ["        return fetchArrayTypes()\n", `        return fetchArrayTypes().catch(() => {}) ${STARTUP_MARKER}\n`],
  [
    "    if (initial)\n      return reconnect()\n",
    "    if (initial) {\n      query && query.reject(Errors.connection('CONNECTION_CLOSED', options, socket))\n      query = errorResponse = null\n      return reconnect()\n    }\n",
  ],
];

const source = readFileSync(file, "utf8");
let patched = source;
for (const [from, to] of edits) {
  if (patched.includes(to)) continue;
  if (patched.split(from).length !== 2) {
    console.warn(`spool: postgres driver at ${file} differs from the version this patch was written for; left unpatched (see scripts/patch-postgres-driver.mjs)`);
    process.exit(0);
  }
  patched = patched.replace(from, to);
}
if (patched !== source) writeFileSync(file, patched);
