// The runtime log (observability `runtime_log`): JSON lines {time, level, msg, ...fields} at or
// above the configured level. Every field passes through redact(), so a secret passed by mistake
// is masked rather than written.
import type { LogLevel } from "../../compiler/ir.js";
import type { NowClock } from "../time/clock.js";
import { redact, redactText } from "./redact.js";
import { openLogSink, type LogOutput, type LogSink } from "./sink.js";

// The IR's level (compiler/ir.ts), re-exported for the logger's users.
export type { LogLevel };

const LEVEL_RANK: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40, off: 100 };

export type LogFields = Readonly<Record<string, unknown>>;

export interface RuntimeLoggerOptions {
  level: LogLevel;
  output: LogOutput;
  clock: NowClock;
  /** Replaces the output (tests). */
  sink?: LogSink;
}

export interface RuntimeLogger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  enabled(level: Exclude<LogLevel, "off">): boolean;
  /** `--log-level` and reloads change the level without reopening the output. */
  setLevel(level: LogLevel): void;
  /** A logger that adds `fields` to every line (e.g. {component: "ingress"}); shares level and output. */
  child(fields: LogFields): RuntimeLogger;
  close(): Promise<void>;
}

// Fields a caller may not override: they are the line's frame.
const RESERVED = new Set(["time", "level", "msg"]);

export function createRuntimeLogger(options: RuntimeLoggerOptions): RuntimeLogger {
  const sink = options.sink ?? openLogSink(options.output);
  const state = { rank: LEVEL_RANK[options.level] };

  const make = (bound: LogFields): RuntimeLogger => {
    const write = (level: Exclude<LogLevel, "off">, msg: string, fields?: LogFields) => {
      if (LEVEL_RANK[level] < state.rank) return;
      const line: Record<string, unknown> = { time: new Date(options.clock.now()).toISOString(), level, msg: redactText(msg) };
      const extra = redact({ ...bound, ...fields }) as Record<string, unknown>;
      for (const [name, value] of Object.entries(extra)) {
        if (!RESERVED.has(name)) line[name] = value;
      }
      sink.write(`${JSON.stringify(line)}\n`);
    };
    return {
      debug: (msg, fields) => write("debug", msg, fields),
      info: (msg, fields) => write("info", msg, fields),
      warn: (msg, fields) => write("warn", msg, fields),
      error: (msg, fields) => write("error", msg, fields),
      enabled: (level) => LEVEL_RANK[level] >= state.rank,
      setLevel: (level) => {
        state.rank = LEVEL_RANK[level];
      },
      child: (fields) => make({ ...bound, ...fields }),
      close: () => sink.close(),
    };
  };
  return make({});
}

export function isLogLevel(text: string): text is LogLevel {
  return Object.hasOwn(LEVEL_RANK, text);
}
