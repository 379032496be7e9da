// POST /secrets/{name}, GET /secrets/{name}, DELETE /secrets/{name}/{id}: the HTTP binding of the
// runtime secret pools (docs/api.md "Runtime secrets"; the operations are runtime/secrets/pools.ts).
// Checks in order: audit headers (the router), pool, body. No answer and no audit record holds a
// value: the record's input_hash covers the body without `value` (docs/decisions.md D91).
import { createHash } from "node:crypto";
import { ApiError, apiError } from "../errors.js";
import { parseStrictJson } from "../http/json.js";
import type { NewVersion, RuntimeSecrets } from "../secrets/pools.js";
import type { AuditMetadata } from "./audit-record.js";
import { parseRfc3339Ms, refuseQuery } from "./params.js";
import type { AdminRequest, MutationHandler, ReadHandler } from "./request.js";

const ADD_SCHEMA = { value: { type: "string" }, not_before: { type: "string" }, not_after: { type: "string" } } as const;

export const listSecretVersions: ReadHandler = async (request) => {
  refuseQuery(request);
  return pools(request).list(request.config, request.params.name);
};

export function addSecretVersion(): MutationHandler {
  return {
    tool: "secret_add",
    inputHash: (_request, body) => bodyHashWithoutValue(body),
    refusedMetadata: (request, body) => ({ kind: "secret_mutation", operation: "add", pool: request.params.name, ...windowAsSent(body) }),
    async run(request) {
      refuseQuery(request);
      const name = request.params.name;
      const created = await pools(request).add(request.config, name, async () => readNewVersion(await request.body()));
      const metadata: AuditMetadata = { kind: "secret_mutation", operation: "add", pool: name, secret_id: created.id, not_before: created.not_before };
      if (created.not_after !== undefined) metadata.not_after = created.not_after;
      return { status: 201, body: { ...created }, metadata };
    },
  };
}

export function deleteSecretVersion(): MutationHandler {
  return {
    tool: "secret_delete",
    inputHash: (_request, body) => bodyHashWithoutValue(body),
    refusedMetadata: (request) => ({ kind: "secret_mutation", operation: "delete", pool: request.params.name, secret_id: request.params.id }),
    async run(request) {
      refuseQuery(request);
      const { name, id } = request.params;
      await pools(request).remove(request.config, name, id);
      return { status: 204, body: null, metadata: { kind: "secret_mutation", operation: "delete", pool: name, secret_id: id } };
    },
  };
}

function pools(request: AdminRequest): RuntimeSecrets {
  const secrets = request.deps.secrets;
  if (secrets) return secrets;
  // Declared or not, a pool cannot be checked without the pools: say what is missing.
  throw apiError("secret_management_unavailable", "runtime secrets are not available in this instance");
}

function readNewVersion(body: Buffer): NewVersion {
  let parsed: { value?: string; not_before?: string; not_after?: string };
  try {
    parsed = parseStrictJson(body, ADD_SCHEMA);
  } catch (error) {
    // The JSON parser's message quotes the body, which holds the value.
    if (error instanceof ApiError && error.detail.startsWith("malformed JSON")) throw apiError("invalid_body", "malformed JSON (the body is not quoted: it holds a secret)");
    throw error;
  }
  if (parsed.value === undefined) throw apiError("secret_value_empty", "value is missing");
  return { value: parsed.value, notBeforeMs: instant(parsed.not_before, "not_before"), notAfterMs: instant(parsed.not_after, "not_after") };
}

function instant(text: string | undefined, field: string): number | undefined {
  if (text === undefined) return undefined;
  const ms = parseRfc3339Ms(text);
  if (ms === undefined) throw apiError("invalid_body", `${field} must be an RFC 3339 timestamp`);
  return ms;
}

/** The body as a JSON object without `value`, or `{}` when it is none (its bytes may hold the value). */
function bodyWithoutValue(body: Buffer): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    return {};
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return {};
  const { value: _value, ...rest } = parsed as Record<string, unknown>;
  return rest;
}

/** `sha256:` + hex SHA-256 of the body without `value` as compact JSON, every object's keys sorted. */
export function bodyHashWithoutValue(body: Buffer): string {
  return `sha256:${createHash("sha256").update(canonicalJson(bodyWithoutValue(body))).digest("hex")}`;
}

/** Compact JSON with every object's keys in `sort()` order, values as JSON.stringify writes them. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** A refused add's window as the body sent it (strings only). */
function windowAsSent(body: Buffer): { not_before?: string; not_after?: string } {
  const sent = bodyWithoutValue(body);
  const out: { not_before?: string; not_after?: string } = {};
  if (typeof sent.not_before === "string") out.not_before = sent.not_before.slice(0, 64);
  if (typeof sent.not_after === "string") out.not_after = sent.not_after.slice(0, 64);
  return out;
}
