// A route's HMAC secrets for one request: its static secrets and the versions its runtime pools
// hold now (docs/secrets.md "Verification"). Generic `auth hmac` checks a version's window at the
// request's X-Timestamp (the verifier does, as for the static windows); a preset at the receipt
// time, so the versions it gets are the ones valid now, without windows.
import { secretsValidAt } from "../../auth/secrets.js";
import type { ResolvedSecret } from "../../auth/types.js";
import type { RuntimeSecretVersions } from "../../secrets/pools.js";
import type { IngressAuth } from "./index.js";

export function withRuntimeVersions(auth: IngressAuth, pools: RuntimeSecretVersions | undefined, nowMs: number): IngressAuth {
  if ((auth.kind !== "hmac" && auth.kind !== "provider") || !auth.runtimePools?.length || !pools) return auth;
  const versions: ResolvedSecret[] = [];
  for (const pool of auth.runtimePools) {
    if (auth.kind === "hmac") versions.push(...pools.versionsOf(pool));
    else for (const value of secretsValidAt(pools.versionsOf(pool), nowMs)) versions.push({ value });
  }
  if (versions.length === 0) return auth;
  return { ...auth, options: { ...auth.options, secrets: [...auth.options.secrets, ...versions] } } as IngressAuth;
}

