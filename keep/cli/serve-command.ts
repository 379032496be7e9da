// `keep serve` as a process: flags (all required unless --dev), startup errors → exit 1, then
// serve until SIGTERM or SIGINT (exit 0).
import { startServer, StartupError, type ServeOptions } from "../server/serve.js";
import { givenValue, required } from "./args.js";
import { devBanner, prepareDev } from "./dev.js";

const log = (line: string): void => void process.stderr.write(`${line}\n`);

export async function runServe(raw: readonly string[], dev: boolean, enableExport: boolean): Promise<number> {
  // A SIGHUP during startup must not end the process (its default action): the policy is read
  // at startup anyway, and the server's own handler takes over once it listens.
  process.on("SIGHUP", () => undefined);
  let opts: ServeOptions;
  if (dev) {
    opts = await prepareDev(givenValue(raw, "listen"));
  } else {
    opts = {
      listen: required(raw, "listen"),
      tlsCert: required(raw, "tls-cert"),
      tlsKey: required(raw, "tls-key"),
      policy: required(raw, "policy"),
      data: required(raw, "data"),
      auditLog: givenValue(raw, "audit-log"),
      enableExport,
    };
  }
  try {
    const running = await startServer(opts, log);
    if (dev) process.stdout.write(devBanner(running.url));
    log(`keep: serving on ${running.url}${opts.enableExport ? " (export enabled)" : ""}`);
    await new Promise<void>((resolve) => {
      process.once("SIGTERM", resolve);
      process.once("SIGINT", resolve);
    });
    await running.stop();
    return 0;
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    log(`keep: ${error.message}`);
    return 1;
  }
}
