import type { Directive } from "../../grammar/index.js";
import { readBareBlock, scalar, singleArg } from "../block-reader.js";
import type { CompileContext } from "../context.js";
import { DEFAULTS } from "../defaults.js";
import type { QueueLimits, RetentionConfig } from "../ir.js";
import { decodeOneOf } from "../values.js";
import { DROP_POLICIES } from "../reference.js";

// queue_limits { max_depth <int>; drop_policy reject|drop_oldest } — depth counts queued + leased.
export function compileQueueLimits(cx: CompileContext, d: Directive | undefined): QueueLimits {
  const out = { maxDepth: DEFAULTS.maxDepth as number, dropPolicy: "reject" as QueueLimits["dropPolicy"] };
  if (!d) return out;
  readBareBlock(cx, d, "queue_limits", {
    max_depth: scalar.int(cx, "max_depth", 1, 1_000_000_000, (v) => (out.maxDepth = v)),
    drop_policy: {
      handle: (p) => {
        const a = singleArg(cx, p, "drop_policy reject|drop_oldest");
        const v = a && decodeOneOf(cx, a, "drop_policy", DROP_POLICIES);
        if (v) out.dropPolicy = v;
      },
    },
  });
  return out;
}

/** The four retention blocks; each may be absent. */
export function compileRetention(cx: CompileContext, blocks: {
  queue?: Directive;
  delivered?: Directive;
  dlq?: Directive;
  attempts?: Directive;
}): RetentionConfig {
  const r = DEFAULTS.retention;
  const queue = { ...r.queue } as { maxAgeMs: number | null; pruneIntervalMs: number };
  const delivered = { ...r.delivered } as { maxAgeMs: number | null };
  const dlq = { ...r.dlq } as { maxAgeMs: number | null; maxDepth: number | null };
  const attempts = { ...r.attempts } as { maxAgeMs: number | null; maxRows: number | null };
  const read = (d: Directive, name: string, rules: Parameters<typeof readBareBlock>[3]) => cx.within(name, () => readBareBlock(cx, d, name, rules));
  const maxAge = (set: (v: number | null) => void) => scalar.duration(cx, "max_age", (v) => set(v === 0 ? null : v), { allowOff: true });
  if (blocks.queue) {
    read(blocks.queue, "queue_retention", {
      max_age: maxAge((v) => (queue.maxAgeMs = v)),
      prune_interval: scalar.duration(cx, "prune_interval", (v) => (queue.pruneIntervalMs = v!), { positive: true }),
    });
  }
  if (blocks.delivered) read(blocks.delivered, "delivered_retention", { max_age: maxAge((v) => (delivered.maxAgeMs = v)) });
  if (blocks.dlq) {
    read(blocks.dlq, "dlq_retention", {
      max_age: maxAge((v) => (dlq.maxAgeMs = v)),
      max_depth: scalar.int(cx, "max_depth", 1, 1_000_000_000, (v) => (dlq.maxDepth = v)),
    });
  }
  if (blocks.attempts) {
    read(blocks.attempts, "attempts_retention", {
      max_age: maxAge((v) => (attempts.maxAgeMs = v)),
      max_rows: scalar.int(cx, "max_rows", 1, 1_000_000_000, (v) => (attempts.maxRows = v)),
    });
  }
  return { queue, delivered, dlq, attempts };
}
