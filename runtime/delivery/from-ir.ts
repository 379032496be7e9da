// IR → dispatcher settings: the one place where the compiled Spoolfile meets the delivery engine.
// Only `deliver` routes are drained by Spool; pull routes are the Pull API's business.
import type { DeliverTarget, RotatingSecret, SignConfig, SpoolConfig } from "../../compiler/ir.js";
import type { DispatcherConfig, RouteDeliveryConfig, TargetSettings } from "./settings.js";
import type { SigningConfig, SigningSecret } from "./sign.js";

export function dispatcherConfigFromIr(config: SpoolConfig): DispatcherConfig {
  const routes: RouteDeliveryConfig[] = [];
  for (const route of config.routes) {
    if (route.mode.kind !== "deliver") continue;
    routes.push({ route: route.path, concurrency: route.mode.concurrency, targets: route.mode.targets.map(targetSettings) });
  }
  return { routes, egress: config.defaults.egress, lease: config.defaults.deliver };
}

function targetSettings(target: DeliverTarget): TargetSettings {
  if (target.kind === "exec") {
    return {
      kind: "exec",
      target: target.target,
      program: target.program,
      args: [...target.args],
      env: Object.fromEntries(target.env),
      timeoutMs: target.timeoutMs,
      retry: target.retry,
    };
  }
  return {
    kind: "http",
    target: target.target,
    url: target.url,
    ...(target.written !== undefined ? { written: target.written } : {}),
    timeoutMs: target.timeoutMs,
    retry: target.retry,
    headers: Object.fromEntries(target.headers),
    ...(target.sign ? { signing: signingConfig(target.sign) } : {}),
  };
}

/**
 * A never-valid stand-in for a target whose every secret is unreadable. Sending such a target's
 * messages unsigned would hand receivers unauthenticated requests, and refusing the whole config
 * would stop every other route; instead each attempt fails with NoValidSecretError, which push.ts
 * retries (like a rotation gap), so the messages wait for a reload that makes the secret readable.
 * The value is valid base64 so the standard_webhooks key decoding at build time accepts it.
 */
const unreadableSecret: SigningSecret = { value: "AA==", validFromMs: 0, validUntilMs: 0 };

export function signingConfig(sign: SignConfig): SigningConfig {
  // Unreadable secrets (value null; `spool run` reports them) are skipped: signing with the readable ones
  // is what an operator rotating in a new file expects while the old one still works.
  const readable = sign.secrets.flatMap(signingSecret);
  const secrets = readable.length > 0 ? readable : [unreadableSecret];
  if (sign.mode === "standard_webhooks") return { mode: "standard_webhooks", secrets, selection: sign.selection };
  return { mode: "hmac", secrets, selection: sign.selection, signatureHeader: sign.signatureHeader, timestampHeader: sign.timestampHeader };
}

function signingSecret(secret: RotatingSecret): SigningSecret[] {
  if (secret.source.value === null) return [];
  return [
    {
      value: secret.source.value,
      ...(secret.source.path !== undefined ? { file: secret.source.path } : {}),
      ...(secret.validFromMs !== null ? { validFromMs: secret.validFromMs } : {}),
      ...(secret.validUntilMs !== null ? { validUntilMs: secret.validUntilMs } : {}),
    },
  ];
}
