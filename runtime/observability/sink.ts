// Where log lines go: stdout, stderr or an appended file (observability `output`, `path`).
import { createWriteStream, mkdirSync, openSync, type WriteStream } from "node:fs";
import { dirname } from "node:path";
import type { LogOutput } from "../../compiler/ir.js";

export type { LogOutput };

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
  // Opened now, so a path that cannot be written (a directory, no permission) stops the start with
  // its reason instead of every line being dropped without a word.
  let fd: number;
  try {
    mkdirSync(dirname(path), { recursive: true });
    fd = openSync(path, "a");
  } catch (error) {
    throw new Error(`cannot open log file ${path}: ${(error as Error).message}`, { cause: error });
  }
  const stream: WriteStream = createWriteStream(path, { fd });
  // A full disk later must not crash the server through an unhandled 'error' event; lines are
  // dropped, and the first such failure is said once on stderr.
  stream.once("error", (error) => process.stderr.write(`spool: writing log file ${path} failed, its lines are dropped: ${error.message}\n`));
  stream.on("error", () => undefined);
  return {
    write: (line) => {
      if (!stream.destroyed) stream.write(line);
    },
    close: () => new Promise<void>((resolve) => stream.end(resolve)),
  };
}
