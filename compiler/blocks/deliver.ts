import type { Directive } from "../../grammar/index.js";
import { readBlock, scalar } from "../block-reader.js";
import { spanOf, type CompileContext } from "../context.js";
import { DEFAULTS } from "../defaults.js";
import { UNSETTABLE_DELIVER_HEADERS } from "../syntax.js";
import type { Defaults, DeliverTarget, NamedSecret, RotatingSecret, SignConfig } from "../ir.js";
import { decodeHeaderName, decodeHeaderValue, decodeHttpUrl, decodeOneOf, decodeSecretSource, expectArgs, expectNoBlock } from "../values.js";
import { compileRetry } from "./retry.js";
import { checkStandardWebhooksKeys, plainSecret, resolveSecretRefs } from "./secrets.js";

const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

// deliver "<url>" [{ retry …; timeout D; header "N" "V"…; sign hmac <source> | sign hmac secret_ref "A" "B";
//   sign standard_webhooks <source>; sign signature_header "N"; sign timestamp_header "N";
//   sign secret_selection newest_valid|oldest_valid }]
// deliver exec "<program>" [args…] [{ timeout D; retry …; env KEY VALUE… }]
export function compileDeliver(cx: CompileContext, d: Directive, defaults: Defaults, secrets: readonly NamedSecret[]): DeliverTarget | undefined {
  if (d.args.length >= 1 && d.args[0].kind === "word" && d.args[0].value === "exec") return compileExec(cx, d, defaults);
  if (!expectArgs(cx, d, 1, 1, 'deliver "<url>" { … } or deliver exec "<program>" { … }')) return undefined;
  const url = decodeHttpUrl(cx, d.args[0], "deliver");
  let retry = defaults.deliver.retry;
  let timeoutMs = defaults.deliver.timeoutMs;
  const headers: [string, string][] = [];
  const sign = { mode: null as SignConfig["mode"] | null, secrets: [] as RotatingSecret[], selection: "newest_valid" as SignConfig["selection"], signatureHeader: DEFAULTS.signatureHeader as string, timestampHeader: DEFAULTS.timestampHeader as string };
  if (d.block) {
    readBlock(cx, d, "deliver", {
      retry: { handle: (r) => { const v = compileRetry(cx, r, defaults.deliver.retry); if (v) retry = v; } },
      timeout: scalar.duration(cx, "timeout", (v) => (timeoutMs = v!), { positive: true }),
      header: {
        repeatable: true,
        handle: (h) => {
          if (!expectArgs(cx, h, 2, 2, 'header "Name" "value"') || !expectNoBlock(cx, h)) return;
          const name = decodeHeaderName(cx, h.args[0], "deliver header");
          const value = decodeHeaderValue(cx, h.args[1], "deliver header");
          if (name === undefined || value === undefined) return;
          if (UNSETTABLE_DELIVER_HEADERS.has(name.toLowerCase())) {
            cx.error(h.args[0].span, "invalid_value", "a header the HTTP client does not set itself (not framing or connection headers)", `deliver header: ${name} is the HTTP client's to set for each request (framing, connection); set here, every delivery would fail`);
            return;
          }
          if (headers.some(([n]) => n.toLowerCase() === name.toLowerCase())) {
            cx.error(h.args[0].span, "duplicate_directive", "each header name once (header names are case-insensitive)", `deliver header: ${name} is set twice (header names are case-insensitive)`);
            return;
          }
          headers.push([name, value]);
        },
      },
      sign: { repeatable: true, handle: (s) => compileSign(cx, s, sign, secrets) },
    });
  }
  if (sign.signatureHeader.toLowerCase() === sign.timestampHeader.toLowerCase()) {
    cx.error(spanOf(d), "conflict", "different signature_header and timestamp_header", "deliver sign: signature_header and timestamp_header must differ");
  }
  if (!sign.mode && sign.secrets.length === 0 && (sign.signatureHeader !== DEFAULTS.signatureHeader || sign.timestampHeader !== DEFAULTS.timestampHeader)) {
    cx.error(spanOf(d), "missing_directive", 'sign hmac <source> or sign hmac secret_ref "ID" for the header options', "deliver sign: header options need sign hmac <source> or sign hmac secret_ref \"ID\"");
  }
  if (!url) return undefined;
  const signConfig: SignConfig | null = sign.mode ? { ...sign, mode: sign.mode } : null;
  // Placeholders may bring credentials into the URL; logs show it as written (docs/delivery.md "Delivery logs").
  const written = d.args[0].value.trim();
  return { kind: "http", target: url, url, ...(written !== url ? { written } : {}), timeoutMs, retry, headers, sign: signConfig };
}

function compileSign(cx: CompileContext, s: Directive, sign: { mode: SignConfig["mode"] | null; secrets: RotatingSecret[]; selection: SignConfig["selection"]; signatureHeader: string; timestampHeader: string }, secrets: readonly NamedSecret[]): void {
  if (!expectNoBlock(cx, s)) return;
  const what = s.args[0];
  if (!what) {
    cx.error(spanOf(s), "wrong_arguments", "sign hmac|standard_webhooks <source>, sign signature_header|timestamp_header <name> or sign secret_selection …", "sign: expected sign hmac <source>, sign standard_webhooks <source>, sign signature_header …, sign timestamp_header … or sign secret_selection …");
    return;
  }
  const kind = decodeOneOf(cx, what, "sign", ["hmac", "standard_webhooks", "signature_header", "timestamp_header", "secret_selection"] as const);
  if (!kind) return;
  if (kind === "hmac" || kind === "standard_webhooks") {
    if (sign.mode) {
      cx.error(what.span, "duplicate_directive", "one sign hmac or sign standard_webhooks per target (several secret_refs rotate)", `sign: the target is already signed (${sign.mode}); give one sign ${kind} with several secret_refs for rotation`);
      return;
    }
    sign.mode = kind;
    if (s.args.length >= 2 && cx.text(s.args[1]) === "secret_ref") {
      sign.secrets = resolveSecretRefs(cx, s, 2, secrets, `sign ${kind}`);
      if (kind === "standard_webhooks") checkStandardWebhooksKeys(cx, spanOf(s), sign.secrets, "sign standard_webhooks");
      return;
    }
    if (!expectArgs(cx, s, 2, 2, `sign ${kind} <source>`)) return;
    const source = decodeSecretSource(cx, s.args[1], `sign ${kind}`);
    if (source) sign.secrets = [plainSecret(source)];
    if (source && kind === "standard_webhooks") checkStandardWebhooksKeys(cx, s.args[1].span, sign.secrets, "sign standard_webhooks");
    return;
  }
  if (!expectArgs(cx, s, 2, 2, `sign ${kind} <value>`)) return;
  if (kind === "secret_selection") {
    const v = decodeOneOf(cx, s.args[1], "sign secret_selection", ["newest_valid", "oldest_valid"] as const);
    if (v) sign.selection = v;
    return;
  }
  const name = decodeHeaderName(cx, s.args[1], `sign ${kind}`);
  if (!name) return;
  if (kind === "signature_header") sign.signatureHeader = name;
  else sign.timestampHeader = name;
}

function compileExec(cx: CompileContext, d: Directive, defaults: Defaults): DeliverTarget | undefined {
  if (!expectArgs(cx, d, 2, Infinity, 'deliver exec "<program>" [args…] { … }')) return undefined;
  const program = cx.text(d.args[1]);
  if (program.trim() === "") return cx.error(d.args[1].span, "invalid_value", "a program path", "deliver exec: the program path is empty");
  const args = d.args.slice(2).map((a) => cx.text(a));
  let retry = defaults.deliver.retry;
  let timeoutMs = defaults.deliver.timeoutMs;
  const env: [string, string][] = [];
  if (d.block) {
    readBlock(cx, d, "deliver exec", {
      retry: { handle: (r) => { const v = compileRetry(cx, r, defaults.deliver.retry); if (v) retry = v; } },
      timeout: scalar.duration(cx, "timeout", (v) => (timeoutMs = v!), { positive: true }),
      env: {
        repeatable: true,
        handle: (e) => {
          if (!expectArgs(cx, e, 2, 2, "env KEY VALUE") || !expectNoBlock(cx, e)) return;
          const key = cx.text(e.args[0]);
          if (!ENV_KEY.test(key)) {
            cx.error(e.args[0].span, "expected_name", "an environment variable name (letters, digits and _, not starting with a digit)", `env: ${JSON.stringify(key)} is not a valid environment variable name`, { found: key });
            return;
          }
          if (env.some(([k]) => k === key)) cx.error(e.args[0].span, "duplicate_directive", "each env variable once", `env: ${key} is set twice`);
          env.push([key, cx.text(e.args[1])]);
        },
      },
    });
  }
  return { kind: "exec", target: `exec:${program}`, program, args, timeoutMs, retry, env };
}
