// The IR's route auth as the verifiers' plain values. Secrets were resolved by the compiler
// (`spool run` compiles with strictSecrets, so an unreadable secret never reaches here); an
// unresolved one is dropped, which makes that credential match nothing rather than everything.
import type { RotatingSecret, RouteAuth } from "../../compiler/ir.js";
import { secretValues } from "../auth/secrets.js";
import type { IngressAuth, ResolvedSecret } from "./verify/index.js";

export function ingressAuthFor(auth: RouteAuth): IngressAuth {
  switch (auth.kind) {
    case "none":
      return { kind: "none" };
    case "token":
      return { kind: "token", tokens: secretValues(auth.tokens) };
    case "basic":
      return { kind: "basic", credentials: auth.users.map((u) => ({ username: u.username, password: u.password })) };
    case "hmac":
      return {
        kind: "hmac",
        options: {
          secrets: rotatingSecrets(auth.secrets),
          signatureHeader: auth.signatureHeader,
          timestampHeader: auth.timestampHeader,
          nonceHeader: auth.nonceHeader,
          toleranceMs: auth.toleranceMs,
        },
        runtimePools: auth.runtimePools,
      };
    case "provider":
      return { kind: "provider", provider: auth.provider, options: { secrets: rotatingSecrets(auth.secrets), toleranceMs: auth.toleranceMs }, runtimePools: auth.runtimePools };
    case "forward":
      return {
        kind: "forward",
        url: auth.url,
        options: { timeoutMs: auth.timeoutMs, copyHeaders: auth.copyHeaders, bodyLimitBytes: auth.bodyLimitBytes },
      };
  }
}

function rotatingSecrets(secrets: readonly RotatingSecret[]): ResolvedSecret[] {
  const out: ResolvedSecret[] = [];
  for (const secret of secrets) {
    if (secret.source.value === null || secret.source.value === "") continue;
    out.push({
      value: secret.source.value,
      validFromMs: secret.validFromMs ?? undefined,
      validUntilMs: secret.validUntilMs ?? undefined,
    });
  }
  return out;
}
