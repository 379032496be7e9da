// Strict JSON request bodies shared by the Pull and Admin APIs (docs/api.md "Pull API", "Admin API":
// unknown fields and trailing documents give 400). A schema is plain data, so each handler states
// its body once and gets a typed value back.
import { apiError, type ApiError } from "../errors.js";
import { MAX_DURATION_TEXT, parseDurationMs } from "../../compiler/index.js";

export type ScalarFieldType = "string" | "integer" | "boolean" | "string[]" | "duration" | "string_map";

export type FieldSpec =
  | { readonly type: ScalarFieldType; readonly required?: boolean }
  | { readonly type: "object[]"; readonly of: BodySchema; readonly required?: boolean };

export type BodySchema = { readonly [field: string]: FieldSpec };

type ValueOf<F extends FieldSpec> = F extends { type: "object[]"; of: infer S extends BodySchema }
  ? ParsedBody<S>[]
  : F["type"] extends "string"
    ? string
    : F["type"] extends "integer"
      ? number
      : F["type"] extends "boolean"
        ? boolean
        : F["type"] extends "string[]"
          ? string[]
          : F["type"] extends "duration"
            ? number // milliseconds
            : F["type"] extends "string_map"
              ? Record<string, string>
              : never;

type RequiredKeys<S extends BodySchema> = { [K in keyof S]: S[K] extends { required: true } ? K : never }[keyof S];
type OptionalKeys<S extends BodySchema> = Exclude<keyof S, RequiredKeys<S>>;

/** The typed result of a schema: required fields present, optional fields possibly undefined. */
export type ParsedBody<S extends BodySchema> = { -readonly [K in RequiredKeys<S>]: ValueOf<S[K]> } & {
  -readonly [K in OptionalKeys<S>]?: ValueOf<S[K]>;
};

export interface StrictJsonOptions {
  /** An empty (or whitespace-only) body counts as `{}` (Pull dequeue accepts an empty body). */
  allowEmpty?: boolean;
}

/**
 * Parses `bytes` as exactly one JSON object matching `schema`; anything else throws 400
 * invalid_body naming the field. Durations become milliseconds. Inside an `object[]` field the
 * error carries `item_index` (Admin publish reports the offending item).
 */
export function parseStrictJson<S extends BodySchema>(
  bytes: Buffer | string,
  schema: S,
  options: StrictJsonOptions = {},
): ParsedBody<S> {
  const text = typeof bytes === "string" ? bytes : bytes.toString("utf8");
  if (text.trim() === "") {
    if (options.allowEmpty) return decodeObject({}, schema, "", undefined) as ParsedBody<S>;
    throw invalidBody("request body is empty; expected a JSON object");
  }
  let document: unknown;
  try {
    // JSON.parse refuses trailing documents ("{}{}") and trailing garbage, which is the rule.
    document = JSON.parse(text);
  } catch (error) {
    throw invalidBody(`malformed JSON: ${(error as Error).message}`);
  }
  return decodeObject(document, schema, "", undefined) as ParsedBody<S>;
}

function decodeObject(value: unknown, schema: BodySchema, path: string, itemIndex: number | undefined): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidBody(`${path || "body"} must be a JSON object`, itemIndex);
  }
  const input = value as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!Object.hasOwn(schema, key)) throw invalidBody(`unknown field ${JSON.stringify(join(path, key))}`, itemIndex);
  }
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(schema)) {
    const fieldPath = join(path, key);
    if (!Object.hasOwn(input, key)) {
      if (spec.required) throw invalidBody(`missing required field ${JSON.stringify(fieldPath)}`, itemIndex);
      continue;
    }
    out[key] = decodeField(input[key], spec, fieldPath, itemIndex);
  }
  return out;
}

function decodeField(value: unknown, spec: FieldSpec, path: string, itemIndex: number | undefined): unknown {
  const wrong = (expected: string) => invalidBody(`field ${JSON.stringify(path)} must be ${expected}`, itemIndex);
  switch (spec.type) {
    case "string":
      if (typeof value !== "string") throw wrong("a string");
      return value;
    case "integer":
      if (typeof value !== "number" || !Number.isSafeInteger(value)) throw wrong("an integer");
      return value;
    case "boolean":
      if (typeof value !== "boolean") throw wrong("a boolean");
      return value;
    case "string[]":
      if (!Array.isArray(value) || !value.every((entry) => typeof entry === "string")) throw wrong("an array of strings");
      return [...value];
    case "duration": {
      if (typeof value !== "string") throw wrong('a duration string such as "30s"');
      const ms = parseDurationMs(value);
      if (ms === undefined) throw wrong(`a duration string such as "30s" (at most ${MAX_DURATION_TEXT}), got ${JSON.stringify(value)}`);
      return ms;
    }
    case "string_map": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) throw wrong("an object of strings");
      const entries = Object.entries(value);
      for (const [name, entry] of entries) {
        if (typeof entry !== "string") throw invalidBody(`field ${JSON.stringify(join(path, name))} must be a string`, itemIndex);
      }
      // fromEntries defines own properties, so a "__proto__" header name stays plain data.
      return Object.fromEntries(entries) as Record<string, string>;
    }
    case "object[]": {
      if (!Array.isArray(value)) throw wrong("an array of objects");
      // Only the outermost array names item_index: that is the batch the Admin API reports on.
      return value.map((entry, index) => decodeObject(entry, spec.of, `${path}[${index}]`, itemIndex ?? index));
    }
  }
}

function join(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

function invalidBody(detail: string, itemIndex?: number): ApiError {
  return apiError("invalid_body", detail, itemIndex === undefined ? {} : { itemIndex });
}
