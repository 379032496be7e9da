import type { Directive } from "../../grammar/index.js";
import { readBlock } from "../block-reader.js";
import type { CompileContext } from "../context.js";
import type { MatchCriteria } from "../ir.js";
import { decodeHeaderName, decodeHostRule, expectArgs, expectNoBlock, singleArgOf } from "../values.js";

type MutableCriteria = { -readonly [K in keyof MatchCriteria]: MatchCriteria[K] extends readonly (infer T)[] ? T[] : never };

export function emptyCriteria(): MutableCriteria {
  return { methods: [], hosts: [], headers: [], headersExist: [], query: [], queryExist: [], remoteIps: [] };
}

const METHOD = /^[A-Z]+$/;

// Body of `@name { … }` and of a route's `match { … }`: method M…; host H; header "N" "V";
// header_exists N; query "k" "v"; query_exists k; remote_ip IP/CIDR. Criteria are ANDed.
export function compileMatchBlock(cx: CompileContext, d: Directive, where: string, into: MutableCriteria = emptyCriteria()): MutableCriteria {
  const pair = (what: string, push: (name: string, value: string) => void) => ({
    repeatable: true,
    handle: (x: Directive) => {
      if (!expectArgs(cx, x, 2, 2, `${what} "name" "value"`) || !expectNoBlock(cx, x)) return;
      push(cx.text(x.args[0]), cx.text(x.args[1]));
    },
  });
  readBlock(cx, d, where, {
    method: {
      repeatable: true,
      handle: (x) => {
        if (!expectArgs(cx, x, 1, Infinity, "method GET POST …") || !expectNoBlock(cx, x)) return;
        for (const a of x.args) {
          const m = cx.text(a).toUpperCase();
          if (!METHOD.test(m)) cx.error(a.span, "invalid_value", "an HTTP method like GET or POST", `method: ${JSON.stringify(a.value)} is not an HTTP method`, { found: a.value });
          else if (!into.methods.includes(m)) into.methods.push(m);
        }
      },
    },
    host: { repeatable: true, handle: (x) => { const a = singleArgOf(cx, x, "host <host|*.domain|*>"); const v = a && decodeHostRule(cx, a, "host"); if (v) into.hosts.push(v); } },
    header: pair("header", (name, value) => into.headers.push({ name, value })),
    header_exists: { repeatable: true, handle: (x) => { const a = singleArgOf(cx, x, "header_exists <name>"); const v = a && decodeHeaderName(cx, a, "header_exists"); if (v) into.headersExist.push(v); } },
    query: pair("query", (name, value) => into.query.push({ name, value })),
    query_exists: { repeatable: true, handle: (x) => { const a = singleArgOf(cx, x, "query_exists <name>"); if (a) into.queryExist.push(cx.text(a)); } },
    remote_ip: { repeatable: true, handle: (x) => { const a = singleArgOf(cx, x, "remote_ip <IP|CIDR>"); const v = a && decodeHostRule(cx, a, "remote_ip", { ipOnly: true }); if (v) into.remoteIps.push(v); } },
  });
  return into;
}

export function mergeCriteria(into: MutableCriteria, from: MatchCriteria): void {
  for (const key of Object.keys(into) as (keyof MutableCriteria)[]) {
    (into[key] as unknown[]).push(...(from[key] as readonly unknown[]).filter((v) => key !== "methods" || !into.methods.includes(v as string)));
  }
}

export function hasCriteria(c: MatchCriteria): boolean {
  return Object.values(c).some((list) => (list as readonly unknown[]).length > 0);
}
