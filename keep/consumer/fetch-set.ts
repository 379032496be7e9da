// Fetching a set (keep/README.md, "Consumers"): (1) list each prefix (an empty listing is an error,
// it may mean the token lacks `list`), (2) name every path (a bad name or a collision refuses the
// whole set), (3) only then read: one POST /v1/export, or one GET per path when export answers 404.
import { InputError } from "./inputs.js";
import { isValidPath, isValidPathOrPrefix, normalizePrefix } from "../common/paths.js";
import { KeepError, refusal } from "./errors.js";
import { nameSet } from "./names.js";
import { call, type Connection } from "./transport.js";

export interface FetchedSecret {
  path: string;
  name: string;
  value: string;
}

function bad(what: string): KeepError {
  return new KeepError(`${what}: unexpected response shape`, "bad_response", 200, false);
}

export async function listPrefix(conn: Connection, prefix: string): Promise<string[]> {
  const canonical = normalizePrefix(prefix);
  if (canonical === undefined) throw refusal("invalid_path", `invalid prefix ${JSON.stringify(prefix)}`);
  const { body } = await call(conn, "GET", `/v1/list/${canonical}`);
  const paths = (body as { paths?: unknown }).paths;
  if (!Array.isArray(paths) || !paths.every((p): p is string => typeof p === "string" && isValidPath(p))) throw bad(`GET /v1/list/${canonical}`);
  return paths;
}

export async function readOne(conn: Connection, path: string): Promise<string> {
  if (!isValidPath(path)) throw refusal("invalid_path", `invalid path ${JSON.stringify(path)}`);
  const { body } = await call(conn, "GET", `/v1/secrets/${path}`);
  const value = (body as { value?: unknown }).value;
  if (typeof value !== "string") throw bad(`GET /v1/secrets/${path}`);
  return value;
}

async function readAll(conn: Connection, paths: string[]): Promise<string[]> {
  try {
    const { body } = await call(conn, "POST", "/v1/export", { paths });
    const secrets = (body as { secrets?: unknown }).secrets;
    if (!Array.isArray(secrets) || secrets.length !== paths.length) throw bad("POST /v1/export");
    return secrets.map((s: { path?: unknown; value?: unknown }, i) => {
      if (s?.path !== paths[i] || typeof s.value !== "string") throw bad("POST /v1/export");
      return s.value;
    });
  } catch (error) {
    if (!(error instanceof KeepError) || error.status !== 404) throw error;
  }
  const values: string[] = [];
  for (const path of paths) values.push(await readOne(conn, path));
  return values;
}

/**
 * The whole set for `given` paths (a trailing "/" marks a prefix) or nothing: every check runs
 * before the first value is read.
 */
export async function fetchSet(conn: Connection, given: readonly string[], nameCheck?: (name: string) => string | undefined): Promise<FetchedSecret[]> {
  for (const p of given) {
    if (!isValidPathOrPrefix(p)) throw refusal("invalid_path", `invalid path ${JSON.stringify(p)}`);
  }
  const paths: string[] = [];
  for (const p of new Set(given)) {
    if (!p.endsWith("/")) {
      paths.push(p);
      continue;
    }
    const listed = await listPrefix(conn, p);
    if (listed.length === 0) throw refusal("empty_listing", `the listing of ${p} is empty (nothing stored, or the token lacks list); nothing was read`);
    paths.push(...listed);
  }
  const unique = [...new Set(paths)];
  const names = nameSet(unique, nameCheck);
  const values = await readAll(conn, unique);
  const byPath = new Map(unique.map((p, i) => [p, values[i]]));
  return [...names].map(([name, path]) => ({ path, name, value: byPath.get(path) as string }));
}

/**
 * An environment variable cannot hold a NUL byte (the OS cuts it, Node refuses it): a value that has
 * one is refused by every route that delivers through the environment, naming its path only.
 */
export function refuseNulValues(secrets: readonly FetchedSecret[]): void {
  const bad = secrets.find((s) => s.value.includes("\u0000"));
  if (bad) throw new InputError(`the value of ${bad.path} (${bad.name}) contains a NUL byte, which an environment variable cannot hold`);
}
