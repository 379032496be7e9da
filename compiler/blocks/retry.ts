import type { Directive } from "../../grammar/index.js";
import { closestName } from "../names.js";
import { spanOf, type CompileContext } from "../context.js";
import type { RetryPolicy } from "../ir.js";
import { decodeDuration, decodeInt, decodeNumber, decodeOneOf, expectNoBlock } from "../values.js";

// retry exponential [max N] [base D] [cap D] [jitter F] — parts optional, any order; exponential
// is the only type. jitter in [0,1]; base <= cap (docs/decisions.md D34).
export function compileRetry(cx: CompileContext, d: Directive, base: RetryPolicy): RetryPolicy | undefined {
  if (!expectNoBlock(cx, d)) return undefined;
  const [kind, ...rest] = d.args;
  if (!kind) return cx.error(spanOf(d), "wrong_arguments", "retry exponential [max N] [base D] [cap D] [jitter F]", "retry: expected retry exponential [max N] [base D] [cap D] [jitter F]");
  if (cx.text(kind) !== "exponential") {
    const suggestion = closestName(cx.text(kind), ["exponential"]);
    return cx.error(kind.span, "expected_enum", "exponential (the only retry type)", `retry: the only retry type is exponential, got ${JSON.stringify(kind.value)}`, { found: kind.value, suggestion });
  }
  const out = { ...base };
  const seen = new Set<string>();
  for (let i = 0; i < rest.length; i += 2) {
    const key = rest[i];
    const value = rest[i + 1];
    const name = decodeOneOf(cx, key, "retry", ["max", "base", "cap", "jitter"]);
    if (!name) continue;
    if (!value) {
      cx.error(key.span, "wrong_arguments", `a value after ${name}`, `retry: ${name} needs a value`);
      continue;
    }
    if (seen.has(name)) cx.error(key.span, "duplicate_directive", `${name} at most once`, `retry: ${name} given twice`);
    seen.add(name);
    if (name === "max") {
      const v = decodeInt(cx, value, "retry max", 0, 1000);
      if (v !== undefined) out.maxRetries = v;
    } else if (name === "jitter") {
      const v = decodeNumber(cx, value, "retry jitter", 0, 1);
      if (v !== undefined) out.jitter = v;
    } else {
      const v = decodeDuration(cx, value, `retry ${name}`, { positive: true });
      if (typeof v === "number") {
        if (name === "base") out.baseMs = v;
        else out.capMs = v;
      }
    }
  }
  if (out.baseMs > out.capMs) return cx.error(spanOf(d), "conflict", "base not above cap", `retry: base (${out.baseMs}ms) must not be above cap (${out.capMs}ms)`);
  return out;
}
