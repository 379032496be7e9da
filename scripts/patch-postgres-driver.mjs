// Patches a crash in the postgres driver (postgres.js 3.4.9, the newest release; upstream issues
// porsager/postgres#1154 and #1208, fixes proposed in #1168/#1176/#1209 but not released). A small
// write is flushed on a later event-loop turn (setImmediate); when the connection closes first
// (a PostgreSQL session killed, a network drop under load), the flush finds the socket gone and
// throws a TypeError no caller can catch, and the whole process exits. Teardown also left the flush
// timer set, so a reconnected session could never flush a small write again.
// The patch: the flush of a closed connection drops its bytes and fails its queries with
// CONNECTION_CLOSED (a catchable error: the store answers 503 and the next call reconnects), and
// teardown resets the timer and the pending bytes. Run by `npm install`/`npm ci` (postinstall);
// idempotent; a driver whose code differs is left alone with a warning.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const MARKER = "/* spool: patched closed-socket flush */";
// The copy `import postgres from "postgres"` loads (its package.json "exports": import → src/).
const file = fileURLToPath(new URL("../node_modules/postgres/src/connection.js", import.meta.url));
if (!existsSync(file)) process.exit(0); // not installed: nothing to patch
const source = readFileSync(file, "utf8");
if (source.includes(MARKER)) process.exit(0);

const edits = [
  [
    "  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)",
    `  function nextWrite(fn) {\n    ${MARKER}\n    if (!socket) {\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      return false\n    }\n    const x = socket.write(chunk, fn)`,
  ],
  ["    error(Errors.connection('CONNECTION_DESTROYED', options))\n\n    clearImmediate(nextWriteTimer)\n", "    error(Errors.connection('CONNECTION_DESTROYED', options))\n\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n"],
  ["    incomings = null\n    clearImmediate(nextWriteTimer)\n", "    incomings = null\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n"],
];
let patched = source;
for (const [from, to] of edits) {
  if (patched.split(from).length !== 2) {
    console.warn(`spool: postgres driver at ${file} differs from the version this patch was written for; left unpatched (see scripts/patch-postgres-driver.mjs)`);
    process.exit(0);
  }
  patched = patched.replace(from, to);
}
writeFileSync(file, patched);
