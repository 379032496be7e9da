// Consumer inputs shared by every consumer route (keep/README.md, "Consumers"): --url (https only),
// --ca (a PEM file), --token-file (one trailing newline stripped; empty, missing or unreadable is a
// failure) and repeated --path. No flag takes a token value: `--token` is an unknown flag. Every
// check runs before any connection.
import { readFileSync } from "node:fs";
import { isValidPathOrPrefix } from "../common/paths.js";
import { KeepError } from "./errors.js";

export interface ConsumerInputs {
  url: URL;
  ca: Buffer;
  token: string;
  paths: string[];
}

export class InputError extends KeepError {
  constructor(message: string) {
    super(message, "invalid_input", undefined, false);
  }
}

const VALUE_FLAGS = new Set(["url", "ca", "token-file", "path"]);

/** Splits `--flag value` / `--flag=value` pairs; stops at `--`. Unknown flags (`--token` too) fail. */
export function parseConsumerFlags(args: readonly string[], extraFlags: readonly string[] = []): { values: Map<string, string[]>; rest: string[] } {
  const extra = new Set(extraFlags);
  const values = new Map<string, string[]>();
  let i = 0;
  for (; i < args.length && args[i] !== "--"; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(args[i]);
    if (!m || !(VALUE_FLAGS.has(m[1]) || extra.has(m[1]))) throw new InputError(`unknown flag ${JSON.stringify(args[i].split("=")[0])}`);
    const value = m[2] ?? args[++i];
    if (value === undefined) throw new InputError(`--${m[1]} needs a value`);
    values.set(m[1], [...(values.get(m[1]) ?? []), value]);
  }
  return { values, rest: args.slice(i + 1) };
}

function one(values: Map<string, string[]>, flag: string): string {
  const given = values.get(flag);
  if (!given || given.length === 0 || given[0] === "") throw new InputError(`--${flag} is required`);
  if (given.length > 1) throw new InputError(`--${flag} was given more than once`);
  return given[0];
}

/** The token file's content without one trailing newline; an empty or unreadable file fails. */
export function readTokenFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new InputError(`cannot read the token file ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const token = text.endsWith("\r\n") ? text.slice(0, -2) : text.endsWith("\n") ? text.slice(0, -1) : text;
  if (token === "") throw new InputError(`the token file ${file} is empty`);
  if (/[\s]/.test(token)) throw new InputError(`the token file ${file} holds more than one token line`);
  return token;
}

export function loadConsumerInputs(values: Map<string, string[]>): ConsumerInputs {
  const rawUrl = one(values, "url");
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new InputError("--url is not a URL");
  }
  if (url.protocol !== "https:") throw new InputError(`--url must be https://, not ${url.protocol}//`);
  const paths = [...new Set(values.get("path") ?? [])];
  if (paths.length === 0) throw new InputError("--path is required");
  for (const p of paths) {
    if (!isValidPathOrPrefix(p)) throw new InputError(`invalid --path ${JSON.stringify(p)}`);
  }
  const caFile = one(values, "ca");
  let ca: Buffer;
  try {
    ca = readFileSync(caFile);
  } catch (error) {
    throw new InputError(`cannot read the CA file ${caFile} (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  if (!ca.toString("latin1").includes("-----BEGIN CERTIFICATE-----")) throw new InputError(`the CA file ${caFile} holds no PEM certificate`);
  return { url, ca, token: readTokenFile(one(values, "token-file")), paths };
}
