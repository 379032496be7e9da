import { createWorker } from "spool/client";

const worker = createWorker({
  url: process.env.SPOOL_PULL_URL ?? "http://127.0.0.1:9443",
  token: process.env.SPOOL_PULL_TOKEN ?? "",
  endpoint: process.env.SPOOL_ENDPOINT ?? "/github",
  concurrency: 8,
  handler: async (message, { signal }) => {
    // message.payload is parsed JSON for JSON requests; message.raw holds the bytes. Pass `signal` on.
    console.log(`handled ${message.id} attempt ${message.attempt}`, message.payload, signal.aborted);
  },
});
process.once("SIGTERM", () => void worker.stop().then(() => process.exit(0)));
