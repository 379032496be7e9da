// The LISTEN session that carries wake-ups between instances: another instance's enqueue (or nack,
// requeue, resume) NOTIFYs the schema's channel with the route, and this instance's long polls on that
// route wake at once instead of at their 1 s re-check.
//
// The session is the store's own dedicated connection, not the driver's built-in listen(), because a
// LISTEN must outlive anything that ends its connection: a killed backend, a database restart, a
// network cut. When the session closes it is re-established, retried with backoff until it works or
// the store closes; every re-established session wakes all local waiters once, since notifications
// sent while it was down are lost.
import postgres from "postgres";
import { quoteIdent, sessionOptions } from "./connect.js";

/** First retry delay after the session drops; doubles per failed attempt up to the maximum. */
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 2_000;

export interface WakeListenerOptions {
  dsn: string;
  schema: string;
  channel: string;
  /** A NOTIFY arrived; its payload is the route (undefined when empty). */
  onRoute: (route: string | undefined) => void;
  /** The session came back after dropping: anything may have become ready meanwhile. */
  onResumed: () => void;
}

export class WakeListener {
  private readonly session: postgres.Sql;
  private closed = false;
  private relistening = false;
  private retryTimer: NodeJS.Timeout | null = null;

  private constructor(private readonly options: WakeListenerOptions) {
    const notifications = {
      // The driver's option for NOTIFY messages on any of its sessions (missing from its typings).
      onnotify: (channel: string, payload: string) => {
        if (channel === options.channel) options.onRoute(payload || undefined);
      },
    };
    this.session = postgres(options.dsn, {
      ...sessionOptions(options.schema, options.dsn),
      ...notifications,
      max: 1,
      // Never end the session on purpose: an idle LISTEN is the point.
      idle_timeout: 0,
      max_lifetime: null,
      fetch_types: false,
      onclose: () => this.relisten(),
    });
  }

  /** Opens the session and LISTENs; fails when the database cannot be reached now. */
  static async start(options: WakeListenerOptions): Promise<WakeListener> {
    const listener = new WakeListener(options);
    try {
      await listener.listen();
    } catch (error) {
      await listener.close();
      throw error;
    }
    return listener;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    await this.session.end({ timeout: 1 }).catch(() => {});
  }

  private listen(): Promise<unknown> {
    // A closed connection reconnects on its next query, so this LISTEN also re-opens the session.
    return this.session.unsafe(`LISTEN ${quoteIdent(this.options.channel)}`);
  }

  /** One retry loop at a time: a failed reconnect closes the connection again, which lands here too. */
  private relisten(): void {
    if (this.closed || this.relistening) return;
    this.relistening = true;
    const attempt = (delayMs: number) => {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        if (this.closed) return;
        this.listen().then(
          () => {
            this.relistening = false;
            if (!this.closed) this.options.onResumed();
          },
          () => attempt(Math.min(delayMs * 2, RETRY_MAX_MS)),
        );
      }, delayMs);
      this.retryTimer.unref();
    };
    attempt(RETRY_FIRST_MS);
  }
}
