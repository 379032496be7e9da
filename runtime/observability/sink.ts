// Where log lines go: stdout, stderr or an appended file (observability `output`, `path`).
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { dirname } from "node:path";

export type LogOutput = { kind: "stdout" } | { kind: "stderr" } | { kind: "file"; path: string };

export interface LogSink {
  write(line: string): void;
  /** Flushes and closes a file; stdout and stderr stay open. */
  close(): Promise<void>;
}

export function openLogSink(output: LogOutput): LogSink {
  switch (output.kind) {
    case "stdout":
      return { write: (line) => void process.stdout.write(line), close: async () => undefined };
    case "stderr":
      return { write: (line) => void process.stderr.write(line), close: async () => undefined };
    case "file":
      return fileSink(output.path);
  }
}

function fileSink(path: string): LogSink {
  mkdirSync(dirname(path), { recursive: true });
  const stream: WriteStream = createWriteStream(path, { flags: "a" });
  // A full disk must not crash the server through an unhandled 'error' event; lines are dropped.
  stream.on("error", () => undefined);
  return {
    write: (line) => {
      if (!stream.destroyed) stream.write(line);
    },
    close: () => new Promise<void>((resolve) => stream.end(resolve)),
  };
}
