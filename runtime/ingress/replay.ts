// Replay protection at ingress: the replay keys of a verified request are claimed in the nonce
// cache, all or none, only once its signature verified, so forged requests cannot burn them
// (docs/decisions.md D14); committed once stored, released when refused after verifying.
import { apiError } from "../errors.js";
import { refuse } from "./refusal.js";
import type { NonceCache, ReplayToken } from "./verify/index.js";

/** Claims every replay key of the request, or none: one already used refuses it (ReplayToken). */
export function claimReplayKeys(nonces: NonceCache, routePath: string, replay: ReplayToken): string[] {
  const claimed: string[] = [];
  for (const key of replay.keys.map((k) => `${routePath}\n${k}`)) {
    if (nonces.claim(key, replay.expiresAtMs) === "replayed") {
      for (const done of claimed) nonces.release(done);
      const what = key.includes("\nmac:") ? "this signed request was already accepted" : "nonce already used";
      throw refuse("auth", apiError("unauthorized", `authentication failed: ${what}`, { surface: "ingress" }));
    }
    claimed.push(key);
  }
  return claimed;
}
