// The Keep client library (route C), imported as `spool/keep`. `url`, `token` and `ca` are all
// required: nothing is read from the environment, which is never written either, and there is no
// retry loop. TLS trusts only `ca`, with verification always on.
import { isValidPath, normalizePrefix } from "../common/paths.js";
import { refusal } from "../consumer/errors.js";
import { fetchSet, listPrefix, readOne } from "../consumer/fetch-set.js";
import { connect, type Connection } from "../consumer/transport.js";
import { SecretValue } from "./secret-value.js";

export { KeepError } from "../consumer/errors.js";
export { SecretValue } from "./secret-value.js";

export interface KeepClientOptions {
  /** `https://HOST:PORT[/base]`; any other scheme is refused. */
  url: string;
  /** The bearer token (read it from a file; never pass it on a command line). */
  token: string;
  /** The CA certificate(s) that signed the server's certificate, PEM. */
  ca: string | Buffer | Uint8Array;
  /** Per-request timeout; default 30000. */
  timeoutMs?: number;
}

function checkOptions(options: KeepClientOptions): Connection {
  if (typeof options !== "object" || options === null) throw new TypeError("KeepClient needs { url, token, ca }");
  const { url, token, ca, timeoutMs = 30_000 } = options;
  if (typeof url !== "string") throw new TypeError("KeepClient: url must be a string");
  if (typeof token !== "string" || token === "" || /[\s]/.test(token)) throw new TypeError("KeepClient: token must be a non-empty string without whitespace");
  if (!(typeof ca === "string" || ca instanceof Uint8Array) || ca.length === 0) throw new TypeError("KeepClient: ca must be a PEM string, Buffer or Uint8Array");
  if (typeof timeoutMs !== "number" || !(timeoutMs > 0)) throw new TypeError("KeepClient: timeoutMs must be a positive number");
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new TypeError("KeepClient: url is not a URL");
  }
  if (base.protocol !== "https:") throw new TypeError(`KeepClient: url must be https:, not ${base.protocol}`);
  if (base.search || base.hash || base.username || base.password) throw new TypeError("KeepClient: url takes no query, fragment or credentials");
  const caText = typeof ca === "string" ? ca : Buffer.from(ca);
  return connect(base, token, caText, timeoutMs);
}

export class KeepClient {
  readonly #conn: Connection;

  constructor(options: KeepClientOptions) {
    this.#conn = checkOptions(options);
  }

  /** One GET of an exact path (needs only `read`). */
  async read(path: string): Promise<SecretValue> {
    if (typeof path !== "string" || !isValidPath(path)) throw refusal("invalid_path", `invalid path ${JSON.stringify(path)}`);
    return new SecretValue(await readOne(this.#conn, path));
  }

  /** The paths under `prefix` the token may list, possibly none. */
  async list(prefix: string): Promise<string[]> {
    return listPrefix(this.#conn, prefix);
  }

  /** Every secret under `prefix`, keyed by variable name; the whole set or a KeepError. */
  async environment(prefix: string): Promise<Map<string, SecretValue>> {
    const canonical = typeof prefix === "string" ? normalizePrefix(prefix) : undefined;
    if (!canonical) throw refusal("invalid_path", `invalid prefix ${JSON.stringify(prefix)}`);
    const secrets = await fetchSet(this.#conn, [`${canonical}/`]);
    return new Map(secrets.map((s) => [s.name, new SecretValue(s.value)]));
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.#conn.agent.destroy();
  }
}
