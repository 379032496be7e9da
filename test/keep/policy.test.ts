// Policy file and globs: per-segment matching, capabilities as the union of an identity's
// policies, and every invalid file refused with a positioned message (file:line:col).
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileGlob, globMatches, type Glob } from "../../keep/server/glob.js";
import { parsePolicy, PolicyError } from "../../keep/server/policy.js";

const test = suite("keep: policy and globs");

const g = (s: string): Glob => {
  const c = compileGlob(s);
  if (typeof c === "string") throw new Error(c);
  return c;
};

test("globs match per segment: * one segment, trailing ** zero or more", () => {
  const cases: [string, string, boolean][] = [
    ["app/**", "app", true],
    ["app/**", "app/X", true],
    ["app/**", "app/a/Y", true],
    ["app/**", "apps/X", false],
    ["svc/*/KEY", "svc/a/KEY", true],
    ["svc/*/KEY", "svc/a/b/KEY", false],
    ["svc/*/KEY", "svc/KEY", false],
    ["**", "anything/at/all", true],
    ["a/b", "a/b", true],
    ["a/b", "a/b/c", false],
    ["a/b", "A/b", false],
    ["*", "x", true],
    ["*", "x/y", false],
  ];
  for (const [glob, path, want] of cases) assert.is(globMatches(g(glob), path), want, `${glob} vs ${path}`);
});

test("invalid globs: partial wildcards, ** not last, empty segments", () => {
  for (const bad of ["ap*", "a/**/b", "a//b", "/a", "a/", "", "a/../b", "**x"]) assert.type(compileGlob(bad), "string", bad);
});

const base = `[[identity]]
name = "ci"
kind = "machine"
policies = ["p1", "p2"]

[[policy]]
name = "p1"

  [[policy.rule]]
  path = "a/**"
  capabilities = ["read"]

[[policy]]
name = "p2"

  [[policy.rule]]
  path = "a/pub/*"
  capabilities = ["list"]
`;

test("capabilities are the union over all rules of all the identity's policies; everything else is denied", () => {
  const p = parsePolicy(base, "policy.toml");
  assert.ok(p.allows("ci", "read", "a/x/y"));
  assert.ok(p.allows("ci", "list", "a/pub/k"));
  assert.not.ok(p.allows("ci", "list", "a/x"));
  assert.not.ok(p.allows("ci", "read", "b/x"));
  assert.not.ok(p.allows("other", "read", "a/x"));
});

function fails(source: string, pattern: RegExp, label: string): void {
  try {
    parsePolicy(source, "policy.toml");
  } catch (error) {
    assert.instance(error, PolicyError, label);
    assert.match((error as Error).message, pattern, label);
    return;
  }
  assert.unreachable(`${label}: accepted`);
}

test("every invalid file stops the load with a positioned message naming the key or value", () => {
  fails(base.replace('kind = "machine"', 'kind = "human"'), /^policy\.toml:3:1: kind must be "machine"/, "kind");
  fails(base.replace('name = "ci"', 'name = "ci"\ncolour = "red"'), /^policy\.toml:3:1: unknown key "colour"/, "unknown identity key");
  fails(base.replace('  path = "a/pub/*"', '  path = "a/pub/*"\n  extra = 1'), /^policy\.toml:18:3: unknown key "extra" in \[\[policy\.rule\]\]/, "unknown rule key");
  fails(base.replace('["read"]', '["read", "write"]'), /^policy\.toml:11:3: unknown capability "write"/, "capability");
  fails(base.replace('["read"]', "[]"), /^policy\.toml:11:3: "capabilities" must not be empty/, "empty capabilities");
  fails(base.replace('["p1", "p2"]', '["p1", "nope"]'), /^policy\.toml:4:1: unknown policy "nope"/, "unknown policy");
  fails(base.replace('name = "p2"', 'name = "p1"'), /^policy\.toml:14:1: duplicate policy name "p1"/, "duplicate policy");
  fails(base.replace('"a/**"', '"ap*"'), /^policy\.toml:10:3: invalid glob/, "glob");
  fails(base.replace('policies = ["p1", "p2"]\n', ""), /missing key "policies"/, "missing key");
  fails(base.replace('name = "ci"', "name = 7"), /^policy\.toml:2:1: "name" in \[\[identity\]\] must be a non-empty string/, "wrong type");
  fails(`${base}\n[[role]]\nname = "x"\n`, /^policy\.toml:20:1: unknown table or key "role"/, "unknown table");
  fails(`${base}\n[[identity]]\nname = "ci"\nkind = "machine"\npolicies = []\n`, /duplicate identity name "ci"/, "duplicate identity");
  fails("[[identity]\nname = 1", /^policy\.toml:1:\d+: /, "syntax");
});

test("an identity may hold no policies (it is then denied everything)", () => {
  const p = parsePolicy('[[identity]]\nname = "none"\nkind = "machine"\npolicies = []\n', "p.toml");
  assert.ok(p.hasIdentity("none"));
  assert.not.ok(p.allows("none", "read", "a"));
});

test.run();
