// The credential headers no stored message holds (docs/decisions.md D11: stored headers exclude
// them), whether ingress captured the headers or a publisher supplied them: they would hand the
// sender's credentials to every consumer and push target.
const NEVER_STORED = new Set(["authorization", "proxy-authorization", "cookie"]);

/** Whether `name` (any spelling) is a credential header. */
export function isCredentialHeader(name: string): boolean {
  return NEVER_STORED.has(name.toLowerCase());
}
