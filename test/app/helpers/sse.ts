// A raw SSE reader for tests of GET …/stream: records every event and comment as it arrives, parsed
// by hand here (independently of the worker library's parser in client/).
import { request, type IncomingMessage } from "node:http";

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

export interface SseReader {
  readonly response: IncomingMessage;
  readonly events: SseEvent[];
  /** Comment lines (`: keepalive`), without the colon and its space. */
  readonly comments: string[];
  /** Everything received, as text. */
  raw(): string;
  /** Resolves when the server ends the response (or the socket closes). */
  readonly ended: Promise<void>;
  /** Waits until `count` message events have arrived. */
  waitForEvents(count: number, timeoutMs?: number): Promise<SseEvent[]>;
  waitFor(probe: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** Opens the stream; resolves once the response headers are in (any status). */
export function openStream(url: string, token: string | undefined, method = "GET"): Promise<SseReader> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
    const req = request(url, { method, headers }, (response) => {
      response.setEncoding("utf8");
      const events: SseEvent[] = [];
      const comments: string[] = [];
      let raw = "";
      let pending = "";
      const waiters = new Set<() => void>();
      const ended = new Promise<void>((done) => {
        response.once("end", done);
        response.once("close", done);
      });
      response.on("data", (chunk: string) => {
        raw += chunk;
        pending += chunk;
        let end: number;
        while ((end = pending.indexOf("\n\n")) >= 0) {
          const block = pending.slice(0, end);
          pending = pending.slice(end + 2);
          const event: SseEvent = { data: "" };
          let isEvent = false;
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) comments.push(line.slice(1).trimStart());
            else {
              isEvent = true;
              const colon = line.indexOf(":");
              const field = line.slice(0, colon);
              const value = line.slice(colon + 1).replace(/^ /, "");
              if (field === "id") event.id = value;
              else if (field === "event") event.event = value;
              else if (field === "data") event.data += (event.data ? "\n" : "") + value;
            }
          }
          if (isEvent) events.push(event);
        }
        for (const wake of [...waiters]) wake();
      });
      const waitFor = (probe: () => boolean, what: string, timeoutMs = 10_000) =>
        new Promise<void>((done, fail) => {
          if (probe()) return done();
          const timer = setTimeout(() => {
            waiters.delete(check);
            fail(new Error(`timed out waiting for ${what}; received:\n${raw}`));
          }, timeoutMs);
          const check = () => {
            if (!probe()) return;
            clearTimeout(timer);
            waiters.delete(check);
            done();
          };
          waiters.add(check);
          void ended.then(check);
        });
      resolve({
        response,
        events,
        comments,
        raw: () => raw,
        ended,
        waitFor,
        waitForEvents: async (count, timeoutMs) => {
          await waitFor(() => events.filter((e) => e.event === "message").length >= count, `${count} message events`, timeoutMs);
          return events.filter((e) => e.event === "message");
        },
        close: () => {
          req.destroy();
          response.destroy();
        },
      });
    });
    req.once("error", reject);
    req.end();
  });
}
