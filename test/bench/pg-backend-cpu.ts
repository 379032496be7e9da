// The CPU the PostgreSQL server processes serving one database spend while a piece of work runs: the
// backends connected to that database (pg_stat_activity), read from /proc every SAMPLE_MS. A backend
// already connected counts from its CPU when sampling started; one that connects later counts whole
// (it started during the work). Shared processes (WAL writer, checkpointer) are not counted. Only where
// the server runs on this machine (127.0.0.1) are its processes readable; elsewhere the figure is null.
import postgres from "postgres";
import { processCpuMs } from "./load.js";

const SAMPLE_MS = 100;

export class PgBackendCpu {
  private readonly sql;
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> = Promise.resolve();
  private started = false;

  constructor(dsn: string) {
    this.sql = postgres(dsn, { max: 1, onnotice: () => {} });
  }

  /** Starts sampling; resolves once the backends connected now have their starting figure. */
  async start(): Promise<void> {
    await this.sample();
    this.started = true;
    this.timer = setInterval(() => {
      this.sampling = this.sampling.then(() => this.sample()).catch(() => {});
    }, SAMPLE_MS);
  }

  /** Stops sampling and returns the backends' CPU ms since start (null when none could be read). */
  async stop(): Promise<number | null> {
    clearInterval(this.timer);
    await this.sampling;
    await this.sample();
    await this.sql.end({ timeout: 5 });
    let total = 0;
    for (const [pid, cpu] of this.last) total += cpu - (this.first.get(pid) ?? 0);
    return this.last.size === 0 ? null : total;
  }

  private async sample(): Promise<void> {
    const rows = await this.sql`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
    for (const { pid } of rows as unknown as { pid: number }[]) {
      const cpu = processCpuMs(pid);
      if (cpu === null) continue;
      // Seen before sampling started: counts from here. Seen later: a new backend, counted whole.
      if (!this.first.has(pid)) this.first.set(pid, this.started ? 0 : cpu);
      this.last.set(pid, cpu);
    }
  }
}
