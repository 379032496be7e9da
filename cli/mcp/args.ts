// Strict argument checking (docs/mcp.md "Arguments"): an unknown key, a wrong type, a missing
// required key or a value out of range is a tool error naming the key; nothing is read or changed.
import { isValidLabel, parseRfc3339Ms } from "../../compiler/index.js";
import { ToolError, type Args, type ObjectSchema, type PropSchema } from "./tool.js";

export function checkArgs(schema: ObjectSchema, args: Args): void {
  checkObject(schema, args, "");
}

function at(path: string, key: string | number): string {
  return typeof key === "number" ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`;
}

function checkObject(schema: ObjectSchema, value: Record<string, unknown>, path: string): void {
  for (const key of Object.keys(value)) {
    if (schema.additionalProperties === false && !Object.hasOwn(schema.properties, key)) {
      const known = Object.keys(schema.properties);
      throw new ToolError(`unknown argument ${JSON.stringify(at(path, key))}${known.length > 0 ? ` (allowed: ${known.join(", ")})` : " (this tool takes no arguments)"}`);
    }
  }
  for (const key of schema.required ?? []) {
    if (value[key] === undefined) throw new ToolError(`missing required argument ${JSON.stringify(at(path, key))}`);
  }
  for (const [key, item] of Object.entries(value)) {
    const prop = Object.hasOwn(schema.properties, key) ? schema.properties[key] : (schema.additionalProperties as PropSchema);
    checkValue(prop, item, at(path, key));
  }
}

function checkValue(schema: PropSchema, value: unknown, path: string): void {
  const name = JSON.stringify(path);
  switch (schema.type) {
    case "string": {
      if (typeof value !== "string") throw new ToolError(`argument ${name} must be a string`);
      const length = [...value].length;
      if (schema.enum && !schema.enum.includes(value)) throw new ToolError(`argument ${name} must be one of ${schema.enum.join(", ")}, got ${JSON.stringify(value)}`);
      if (schema.minLength !== undefined && length < schema.minLength) throw new ToolError(`argument ${name} must be at least ${schema.minLength} character${schema.minLength === 1 ? "" : "s"}`);
      if (schema.maxLength !== undefined && length > schema.maxLength) throw new ToolError(`argument ${name} must be at most ${schema.maxLength} characters`);
      if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) throw new ToolError(`argument ${name} must match ${schema.pattern}`);
      return;
    }
    case "integer": {
      if (typeof value !== "number" || !Number.isInteger(value)) throw new ToolError(`argument ${name} must be an integer`);
      if ((schema.minimum !== undefined && value < schema.minimum) || (schema.maximum !== undefined && value > schema.maximum)) {
        throw new ToolError(`argument ${name} must be from ${schema.minimum ?? "-∞"} to ${schema.maximum ?? "∞"}, got ${value}`);
      }
      return;
    }
    case "boolean":
      if (typeof value !== "boolean") throw new ToolError(`argument ${name} must be true or false`);
      return;
    case "array": {
      if (!Array.isArray(value)) throw new ToolError(`argument ${name} must be an array`);
      if (schema.minItems !== undefined && value.length < schema.minItems) throw new ToolError(`argument ${name} must hold at least ${schema.minItems} item${schema.minItems === 1 ? "" : "s"}`);
      if (schema.maxItems !== undefined && value.length > schema.maxItems) throw new ToolError(`argument ${name} must hold at most ${schema.maxItems} items`);
      value.forEach((item, index) => checkValue(schema.items, item, at(path, index)));
      return;
    }
    case "object":
      if (value === null || typeof value !== "object" || Array.isArray(value)) throw new ToolError(`argument ${name} must be an object`);
      checkObject(schema, value as Record<string, unknown>, path);
      return;
  }
}

/**
 * The selector rules every queue tool shares: `route` starts with "/", `application` and
 * `endpoint_name` are labels given together, and route does not mix with them.
 */
export function checkSelector(args: Args, path = ""): void {
  const name = (key: string) => JSON.stringify(at(path, key));
  const { route, application, endpoint_name: endpointName } = args as { route?: string; application?: string; endpoint_name?: string };
  if (route !== undefined && !route.startsWith("/")) throw new ToolError(`argument ${name("route")} must start with "/", got ${JSON.stringify(route)}`);
  if (route !== undefined && (application !== undefined || endpointName !== undefined)) {
    throw new ToolError(`argument ${name("route")} cannot be given with ${name(application !== undefined ? "application" : "endpoint_name")}: name a route or an application+endpoint_name`);
  }
  if ((application === undefined) !== (endpointName === undefined)) {
    throw new ToolError(`argument ${name(application === undefined ? "application" : "endpoint_name")} is missing: application and endpoint_name go together`);
  }
  for (const key of ["application", "endpoint_name"] as const) {
    const value = args[key];
    if (typeof value === "string" && !isValidLabel(value)) throw new ToolError(`argument ${name(key)} is not a valid label: ${JSON.stringify(value)}`);
  }
}

/** An RFC 3339 argument (the Admin API's rule). */
export function checkInstant(args: Args, key: string): void {
  const value = args[key];
  if (typeof value === "string" && parseRfc3339Ms(value) === undefined) throw new ToolError(`argument ${JSON.stringify(key)} must be an RFC 3339 timestamp, got ${JSON.stringify(value)}`);
}
