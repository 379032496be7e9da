// The policy file (TOML, keep/README.md "Policy"): identities of kind "machine" naming policies,
// policies holding rules of a glob and capabilities. Every problem stops the load with a message
// positioned in the file (`policy.toml:12:3: …`).
import { readFileSync } from "node:fs";
import { parse, TomlError } from "smol-toml";
import { compileGlob, globMatches, type Glob } from "./glob.js";
import { PolicyLocator, type Position } from "./policy-locate.js";

export type Capability = "read" | "list";

interface Rule {
  glob: Glob;
  capabilities: ReadonlySet<Capability>;
}

export class PolicyError extends Error {
  override name = "PolicyError";
}

export class Policy {
  constructor(private readonly grants: ReadonlyMap<string, readonly Rule[]>) {}

  hasIdentity(name: string): boolean {
    return this.grants.has(name);
  }

  /** Whether `identity` holds `capability` on `path` (the union of all its policies' rules). */
  allows(identity: string, capability: Capability, path: string): boolean {
    for (const rule of this.grants.get(identity) ?? []) {
      if (rule.capabilities.has(capability) && globMatches(rule.glob, path)) return true;
    }
    return false;
  }
}

type Table = Record<string, unknown>;

class Checker {
  private readonly locator: PolicyLocator;
  constructor(private readonly file: string, source: string) {
    this.locator = new PolicyLocator(source);
  }

  /** Where the top-level table or key `key` is written. */
  header(key: string): Position {
    return this.locator.header(key);
  }

  fail(at: Position, message: string): never {
    throw new PolicyError(`${this.file}:${at.line}:${at.column}: ${message}`);
  }

  tables(doc: Table, key: string): Table[] {
    const value = doc[key];
    if (value === undefined) return [];
    if (!Array.isArray(value) || value.some((t) => typeof t !== "object" || t === null || Array.isArray(t) || t instanceof Date)) {
      this.fail(this.locator.header(key), `${key} must be an array of tables ([[${key}]])`);
    }
    return value as Table[];
  }

  exactKeys(t: Table, table: string, index: number, allowed: string[], required: string[]): void {
    for (const key of Object.keys(t)) {
      if (!allowed.includes(key)) this.fail(this.locator.find(table, index, key), `unknown key "${key}" in [[${table}]] (allowed: ${allowed.join(", ")})`);
    }
    for (const key of required) {
      if (!(key in t)) this.fail(this.locator.find(table, index), `missing key "${key}" in [[${table}]]`);
    }
  }

  string(t: Table, table: string, index: number, key: string): string {
    const v = t[key];
    if (typeof v !== "string" || v === "") this.fail(this.locator.find(table, index, key), `"${key}" in [[${table}]] must be a non-empty string`);
    return v;
  }

  strings(t: Table, table: string, index: number, key: string): string[] {
    const v = t[key];
    if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) this.fail(this.locator.find(table, index, key), `"${key}" in [[${table}]] must be an array of strings`);
    return v as string[];
  }

  at(table: string, index: number, key?: string): Position {
    return this.locator.find(table, index, key);
  }
}

function parseRules(c: Checker, policy: Table, ruleBase: number): Rule[] {
  const rules: Rule[] = [];
  for (const [j, rule] of c.tables(policy, "rule").entries()) {
    const index = ruleBase + j;
    c.exactKeys(rule, "policy.rule", index, ["path", "capabilities"], ["path", "capabilities"]);
    const glob = compileGlob(c.string(rule, "policy.rule", index, "path"));
    if (typeof glob === "string") c.fail(c.at("policy.rule", index, "path"), `invalid glob: ${glob}`);
    const caps = c.strings(rule, "policy.rule", index, "capabilities");
    if (caps.length === 0) c.fail(c.at("policy.rule", index, "capabilities"), `"capabilities" must not be empty`);
    for (const cap of caps) {
      if (cap !== "read" && cap !== "list") c.fail(c.at("policy.rule", index, "capabilities"), `unknown capability "${cap}" (only "read" and "list")`);
    }
    rules.push({ glob, capabilities: new Set(caps as Capability[]) });
  }
  return rules;
}

export function parsePolicy(source: string, file: string): Policy {
  const c = new Checker(file, source);
  let doc: Table;
  try {
    doc = parse(source) as Table;
  } catch (error) {
    if (error instanceof TomlError) {
      const reason = error.message.split("\n")[0].replace(/^Invalid TOML document: /, "");
      throw new PolicyError(`${file}:${error.line}:${error.column}: ${reason}`);
    }
    throw error;
  }
  for (const key of Object.keys(doc)) {
    if (key !== "identity" && key !== "policy") c.fail(c.header(key), `unknown table or key "${key}" (allowed: [[identity]], [[policy]])`);
  }
  const policies = new Map<string, Rule[]>();
  let ruleBase = 0;
  for (const [i, p] of c.tables(doc, "policy").entries()) {
    c.exactKeys(p, "policy", i, ["name", "rule"], ["name"]);
    const name = c.string(p, "policy", i, "name");
    if (policies.has(name)) c.fail(c.at("policy", i, "name"), `duplicate policy name "${name}"`);
    const rules = parseRules(c, p, ruleBase);
    ruleBase += rules.length;
    policies.set(name, rules);
  }
  const grants = new Map<string, Rule[]>();
  for (const [i, id] of c.tables(doc, "identity").entries()) {
    c.exactKeys(id, "identity", i, ["name", "kind", "policies"], ["name", "kind", "policies"]);
    const name = c.string(id, "identity", i, "name");
    if (grants.has(name)) c.fail(c.at("identity", i, "name"), `duplicate identity name "${name}"`);
    const kind = c.string(id, "identity", i, "kind");
    if (kind !== "machine") c.fail(c.at("identity", i, "kind"), `kind must be "machine", not "${kind}"`);
    const rules: Rule[] = [];
    for (const pname of c.strings(id, "identity", i, "policies")) {
      const found = policies.get(pname) ?? c.fail(c.at("identity", i, "policies"), `unknown policy "${pname}"`);
      rules.push(...found);
    }
    grants.set(name, rules);
  }
  return new Policy(grants);
}

export function loadPolicy(file: string): Policy {
  let source: string;
  try {
    source = readFileSync(file, "utf8");
  } catch (error) {
    throw new PolicyError(`${file}: cannot read the policy file (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  return parsePolicy(source, file);
}
