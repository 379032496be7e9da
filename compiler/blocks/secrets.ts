import type { Directive, Span } from "../../grammar/index.js";
import { directivesOf } from "../../grammar/index.js";
import { readBareBlock, readBlock, scalar } from "../block-reader.js";
import { nameOf, spanOf, type CompileContext } from "../context.js";
import { DEFAULTS } from "../defaults.js";
import type { NamedSecret, RotatingSecret, SecretSource } from "../ir.js";
import { parseEncryptionKey, SECRET_KEY_BYTES, SECRET_KEY_VARIABLE } from "../secret-key.js";
import { decodeStandardWebhooksKey, isValidLabel, LABEL_PATTERN } from "../syntax.js";
import { decodeSecretSource, decodeTimestamp, expectArgs, expectNoBlock, singleArgOf } from "../values.js";

const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// vars { NAME value … } — registered before anything else compiles, so every value may use {vars.NAME}.
export function registerVars(cx: CompileContext, d: Directive | undefined): void {
  if (!d) return;
  if (!d.block) {
    cx.error(spanOf(d), "missing_block", "a block: vars { NAME value }", "vars needs a block: vars { NAME value }");
    return;
  }
  if (d.args.length > 0) cx.error(d.args[0].span, "wrong_arguments", "no arguments before the block: vars { NAME value }", "vars takes no arguments before its block: vars { NAME value }", { found: d.args[0].value });
  const seen = new Set<string>();
  for (const v of directivesOf(d.block.items)) {
    if (!v.name) continue;
    const name = nameOf(v);
    if (!VAR_NAME.test(name)) {
      cx.error(v.name.span, "expected_name", "a variable name (letters, digits and _, not starting with a digit)", `vars: ${JSON.stringify(name)} is not a valid variable name (letters, digits and _, not starting with a digit)`, { found: name });
      continue;
    }
    if (seen.has(name)) {
      cx.error(v.name.span, "duplicate_directive", "each variable defined once", `vars: ${name} is defined twice`, { found: name });
      continue;
    }
    seen.add(name);
    if (!expectArgs(cx, v, 1, 1, "NAME <value>") || !expectNoBlock(cx, v)) {
      cx.markBroken("var", name);
      continue;
    }
    cx.defineVar(v.name, v.args[0]);
  }
}

// secrets { secret "ID" { value <source>; valid_from <ts>; valid_until <ts>; runtime <bool>; max_versions N } … }
export function compileSecrets(cx: CompileContext, d: Directive | undefined): NamedSecret[] {
  const out: NamedSecret[] = [];
  if (!d) return out;
  const ids = new Set<string>();
  const runtimeAt = new Map<string, Directive>();
  readBareBlock(cx, d, "secrets", {
    secret: {
      repeatable: true,
      handle: (s) => {
        if (!expectArgs(cx, s, 1, 1, 'secret "ID" { value <source> }')) return;
        const id = cx.text(s.args[0]);
        if (ids.has(id)) cx.error(s.args[0].span, "duplicate_directive", "each secret ID defined once", `secrets: secret ${JSON.stringify(id)} is defined twice`, { found: id });
        ids.add(id);
        let source: SecretSource | undefined;
        let validFromMs: number | null = null;
        let validUntilMs: number | null = null;
        let runtime = false;
        let maxVersions: number = DEFAULTS.secretMaxVersions;
        let maxVersionsAt: Directive | undefined;
        readBlock(cx, s, `secret ${JSON.stringify(id)}`, {
          value: { handle: (v) => { const a = singleArgOf(cx, v, "value <source>"); source = a && decodeSecretSource(cx, a, "secret value"); } },
          valid_from: { handle: (v) => { const a = singleArgOf(cx, v, "valid_from <RFC 3339>"); validFromMs = (a && decodeTimestamp(cx, a, "valid_from")) ?? null; } },
          valid_until: { handle: (v) => { const a = singleArgOf(cx, v, "valid_until <RFC 3339>"); validUntilMs = (a && decodeTimestamp(cx, a, "valid_until")) ?? null; } },
          runtime: scalar.bool(cx, "runtime", (v) => (runtime = v)),
          max_versions: {
            handle: (v) => {
              maxVersionsAt = v;
              scalar.int(cx, "max_versions", 1, 1000, (n) => (maxVersions = n)).handle(v);
            },
          },
        });
        // A runtime pool (docs/secrets.md) is named in Admin API paths, so its ID is a label.
        if (runtime && !isValidLabel(id)) {
          cx.error(s.args[0].span, "invalid_value", "a label (letters, digits, . _ : -, at most 128) as a runtime secret ID", `secret ${JSON.stringify(id)}: a runtime secret's ID must match ${LABEL_PATTERN.source} (it is part of the Admin API path)`, { found: id });
        }
        if (maxVersionsAt && !runtime) {
          cx.error(spanOf(maxVersionsAt), "conflict", "max_versions only with runtime on", `secret ${JSON.stringify(id)}: max_versions is allowed only with runtime on`);
        }
        if (!source && !runtime) {
          cx.markBroken("secret", id);
          if (s.block && !cx.failedWithin(s, "value")) cx.error(spanOf(s), "missing_directive", "value <source> in the secret's block", `secret ${JSON.stringify(id)}: value is required (or runtime on, whose versions come from the Admin API)`);
          return;
        }
        if (!source && cx.failedWithin(s, "value")) {
          cx.markBroken("secret", id);
          return;
        }
        if (validFromMs !== null && validUntilMs !== null && validUntilMs <= validFromMs) {
          cx.error(spanOf(s), "conflict", "valid_until after valid_from", `secret ${JSON.stringify(id)}: valid_until must be after valid_from`);
        }
        if (runtime) runtimeAt.set(id, s);
        out.push({ id, source: source ?? null, validFromMs, validUntilMs, runtime, maxVersions });
      },
    },
  });
  checkEncryptionKey(cx, out, runtimeAt);
  // A secret statement that failed (misspelt, or without its block) still names its ID: a reference
  // to it is not reported as unknown.
  for (const failed of cx.failedDirectives(d, "secret")) if (failed.args[0]) cx.markBroken("secret", failed.args[0].value);
  return out;
}

/**
 * Runtime pools are sealed with SPOOL_SECRET_ENCRYPTION_KEY (docs/secrets.md): without a usable one
 * `spool run` refuses the config (at start, and a reload adding the first pool), `config validate`
 * warns. Said once, at the first runtime pool; never with the variable's value.
 */
function checkEncryptionKey(cx: CompileContext, secrets: readonly NamedSecret[], runtimeAt: ReadonlyMap<string, Directive>): void {
  const first = secrets.find((s) => s.runtime);
  if (!first) return;
  const text = cx.env[SECRET_KEY_VARIABLE];
  const parsed = parseEncryptionKey(text);
  if (parsed.ok) return;
  const at = spanOf(runtimeAt.get(first.id)!);
  const what = `secret ${JSON.stringify(first.id)}: runtime on needs ${SECRET_KEY_VARIABLE} (base64 of ${SECRET_KEY_BYTES} bytes) to seal its versions`;
  if (text === undefined || text.trim() === "") {
    cx.secretProblem(at, "env_unset", `environment variable ${SECRET_KEY_VARIABLE} to be set (base64 of ${SECRET_KEY_BYTES} bytes) for secret ${JSON.stringify(first.id)} with runtime on`, `${what}; ${parsed.problem}`);
  } else {
    cx.secretProblem(at, "invalid_value", `${SECRET_KEY_VARIABLE} to be base64 of exactly ${SECRET_KEY_BYTES} bytes for secret ${JSON.stringify(first.id)} with runtime on (${parsed.problem})`, `${what}; ${parsed.problem}`);
  }
}

/**
 * `secret_ref "A" "B" …` → the named secrets with their validity windows. A `runtime on` pool has
 * no fixed value: its ID goes into `runtimePools` (ingress looks its versions up per request), and
 * where no such list is given (push signing, whose keys come from the file) naming one is an error.
 */
export function resolveSecretRefs(cx: CompileContext, d: Directive, fromIndex: number, secrets: readonly NamedSecret[], what: string, runtimePools?: string[]): RotatingSecret[] {
  const out: RotatingSecret[] = [];
  const refs = d.args.slice(fromIndex);
  if (refs.length === 0) cx.error(spanOf(d), "wrong_arguments", "at least one secret ID after secret_ref", `${what}: secret_ref needs at least one secret ID`);
  for (const ref of refs) {
    const id = cx.text(ref);
    const secret = secrets.find((s) => s.id === id);
    if (!secret) {
      if (cx.isBroken("secret", id) || cx.isBroken("block", "secrets")) continue;
      cx.error(ref.span, "unknown_reference", "a secret ID defined in secrets { secret \"ID\" { value … } }", `${what}: unknown secret ${JSON.stringify(id)}; define it in secrets { secret ${JSON.stringify(id)} { value … } }`, { found: id });
      continue;
    }
    if (secret.runtime) {
      if (runtimePools) {
        if (!runtimePools.includes(id)) runtimePools.push(id);
      } else {
        cx.error(ref.span, "invalid_value", "a secret without runtime on (signing keys come from the Spoolfile)", `${what}: secret ${JSON.stringify(id)} has runtime on; runtime secrets verify ingress only, signing keys come from the Spoolfile`, { found: id });
      }
      continue;
    }
    out.push({ id, source: secret.source!, validFromMs: secret.validFromMs, validUntilMs: secret.validUntilMs });
  }
  return out;
}

export function plainSecret(source: SecretSource): RotatingSecret {
  return { id: null, source, validFromMs: null, validUntilMs: null };
}

/**
 * Standard Webhooks keys (ingress `provider standard_webhooks`, push `sign standard_webhooks`) are
 * base64, optionally prefixed `whsec_`; one that is not, or is empty (`whsec_` alone would be an
 * empty HMAC key, which anyone can sign with), is a config error where it is named. The value itself
 * is never shown. Sources that cannot be read now (value null) are reported elsewhere.
 */
export function checkStandardWebhooksKeys(cx: CompileContext, at: Span, keys: readonly RotatingSecret[], what: string): void {
  for (const { id, source } of keys) {
    if (source.value === null || decodeStandardWebhooksKey(source.value) !== undefined) continue;
    const named = id === null ? `${source.kind}:` + (source.kind === "raw" ? "" : source.ref) : `secret ${JSON.stringify(id)}`;
    cx.error(at, "invalid_value", "a base64 key, optionally prefixed whsec_", `${what}: the key from ${named} is empty or not base64 (optionally prefixed whsec_)`);
  }
}
