// Admin commands that work on the data directory directly: put, rm, ls, token issue/revoke,
// rotate-key. Each returns its exit code; messages go to stderr and never hold a value or token.
import { closeSync, fchmodSync, fsyncSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { isValidPath, normalizePrefix } from "../common/paths.js";
import { loadPolicy } from "../server/policy.js";
import { SecretStore } from "../server/store.js";
import { hashToken, newToken } from "../server/tokens.js";

export const MAX_VALUE_BYTES = 4 * 1024 * 1024;

export class AdminError extends Error {}

function withStore<T>(dir: string, work: (store: SecretStore) => T): T {
  const store = new SecretStore(dir);
  try {
    return work(store);
  } finally {
    store.close();
  }
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function put(path: string, dir: string, valueFile: string | undefined): Promise<void> {
  if (!isValidPath(path)) throw new AdminError(`invalid path ${JSON.stringify(path)} (segments of [A-Za-z0-9._-], no leading, trailing or empty segment)`);
  let value: Buffer;
  try {
    value = valueFile === undefined ? await readStdin() : readFileSync(valueFile);
  } catch (error) {
    throw new AdminError(`cannot read the value (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  if (value.length > MAX_VALUE_BYTES) throw new AdminError(`the value is larger than ${MAX_VALUE_BYTES} bytes; nothing stored`);
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(value);
  } catch {
    throw new AdminError("the value is not valid UTF-8; nothing stored");
  }
  withStore(dir, (store) => store.put(path, value));
  value.fill(0);
}

export function rm(path: string, dir: string): void {
  if (!isValidPath(path)) throw new AdminError(`invalid path ${JSON.stringify(path)}`);
  if (!withStore(dir, (store) => store.remove(path))) throw new AdminError(`no such path: ${path}`);
}

export function ls(prefix: string | undefined, dir: string): string {
  const normal = normalizePrefix(prefix ?? "");
  if (normal === undefined) throw new AdminError(`invalid prefix ${JSON.stringify(prefix)}`);
  return withStore(dir, (store) => store.paths(normal)).map((p) => `${p}\n`).join("");
}

export function tokenIssue(identity: string, policyFile: string, dir: string, out: string): void {
  const policy = loadPolicy(policyFile);
  if (!policy.hasIdentity(identity)) throw new AdminError(`identity ${JSON.stringify(identity)} is not in ${policyFile}; no token issued`);
  const token = newToken();
  let fd: number;
  try {
    fd = openSync(out, "wx", 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new AdminError(code === "EEXIST" ? `${out} exists; it was left unchanged` : `cannot create ${out} (${code ?? "error"})`);
  }
  try {
    try {
      fchmodSync(fd, 0o600);
      writeSync(fd, `${token}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    withStore(dir, (store) => store.setToken(identity, hashToken(token)));
  } catch (error) {
    unlinkSync(out);
    throw new AdminError(`cannot issue the token (${(error as NodeJS.ErrnoException).code ?? "error"}); no file was left`);
  }
}

export function tokenRevoke(identity: string, dir: string): void {
  if (!withStore(dir, (store) => store.revokeToken(identity))) throw new AdminError(`identity ${JSON.stringify(identity)} holds no token`);
}

export function rotateKey(dir: string): string {
  const { keyId, resealed } = withStore(dir, (store) => store.rotateKey());
  return `keep: re-sealed ${resealed} values under key ${keyId}\n`;
}
