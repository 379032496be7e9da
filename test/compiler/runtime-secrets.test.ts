// `secret "ID" { runtime on; max_versions N }` (docs/spoolfile.md "Secrets", docs/secrets.md): what
// compiles, what is refused with file:line:col, and the reload rule for the runtime flag.
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile, type SpoolConfig } from "../../compiler/index.js";
import { renderDiagnostic } from "../../grammar/index.js";
import { restartRequiredChanges } from "../../runtime/reload/policy.js";

const KEY = Buffer.alloc(32, 7).toString("base64");

function compiled(text: string, env: Record<string, string> = { SPOOL_SECRET_ENCRYPTION_KEY: KEY }, strictSecrets = false) {
  return compileSpoolfile(text, "Spoolfile", { env, strictSecrets });
}

function config(text: string): SpoolConfig {
  const result = compiled(text);
  assert.ok(result.config, result.diagnostics.map(renderDiagnostic).join("\n"));
  return result.config!;
}

function errors(text: string): string[] {
  return compiled(text).diagnostics.filter((d) => d.severity === "error").map(renderDiagnostic);
}

const PULL = "pull_api { auth token raw:pull-token }";
const ROUTE = `${PULL}\n/in { auth hmac secret_ref "pool"; pull { path /in } }`;
const test = suite("compiler: runtime secret pools");

test("runtime on: no warning, value optional, max_versions defaults to 32, the pool is named in the route's auth", () => {
  const result = compiled(`secrets { secret "pool" { runtime on } }\n${ROUTE}\n`);
  assert.equal(result.diagnostics.map(renderDiagnostic), []);
  const pool = result.config!.secrets[0];
  assert.equal({ id: pool.id, source: pool.source, runtime: pool.runtime, maxVersions: pool.maxVersions }, { id: "pool", source: null, runtime: true, maxVersions: 32 });
  const auth = result.config!.routes[0].auth;
  assert.is(auth.kind, "hmac");
  if (auth.kind === "hmac") {
    assert.equal(auth.runtimePools, ["pool"]);
    assert.equal(auth.secrets, []);
  }
});

test("a runtime pool beside static secrets, in a provider block; its value is a seed, not a static secret", () => {
  const cfg = config(`secrets {\n  secret "pool" { runtime on; max_versions 5; value raw:seed }\n  secret "old" { value raw:old }\n}\n${PULL}\n/gh { auth hmac { provider github; secret_ref "pool" "old" }; pull { path /gh } }\n`);
  assert.is(cfg.secrets[0].maxVersions, 5);
  const auth = cfg.routes[0].auth;
  assert.is(auth.kind, "provider");
  if (auth.kind === "provider") {
    assert.equal(auth.runtimePools, ["pool"]);
    assert.equal(auth.secrets.map((s) => s.id), ["old"]);
  }
});

test("max_versions without runtime on is an error at its position", () => {
  const found = errors(`secrets {\n  secret "s" { value raw:x; max_versions 3 }\n}\n`);
  assert.is(found.length, 1, found.join("\n"));
  assert.match(found[0], /^Spoolfile:2:\d+: .*max_versions is allowed only with runtime on/);
  assert.equal(errors(`secrets { secret "s" { value raw:x; runtime off; max_versions 3 } }\n`).length, 1);
});

test("max_versions is 1..1000", () => {
  assert.match(errors(`secrets { secret "p" { runtime on; max_versions 0 } }\n`).join("\n"), /max_versions/);
  assert.match(errors(`secrets { secret "p" { runtime on; max_versions 1001 } }\n`).join("\n"), /max_versions/);
  assert.equal(errors(`secrets { secret "p" { runtime on; max_versions 1000 } }\n`), []);
});

test("a runtime pool's ID must be a label", () => {
  const found = errors(`secrets { secret "bad id/x" { runtime on } }\n`);
  assert.is(found.length, 1, found.join("\n"));
  assert.match(found[0], /runtime secret's ID must match/);
  // Without runtime on any ID will do, as before.
  assert.equal(errors(`secrets { secret "bad id/x" { value raw:x } }\n`), []);
});

test("a secret without runtime on still needs a value", () => {
  assert.match(errors(`secrets { secret "s" { valid_from "2026-01-01T00:00:00Z" } }\n`).join("\n"), /value is required/);
});

test("sign hmac secret_ref naming a runtime pool is a config error", () => {
  const found = errors(`secrets { secret "pool" { runtime on } }\n/out { deliver https://example.com/x { sign hmac secret_ref "pool" } }\n`);
  assert.is(found.length, 1, found.join("\n"));
  assert.match(found[0], /^Spoolfile:2:\d+: .*secret "pool" has runtime on; runtime secrets verify ingress only/);
});

test("SPOOL_SECRET_ENCRYPTION_KEY: validate warns that run refuses, run refuses; named, never its value", () => {
  const text = `secrets {\n  secret "static" { value raw:x }\n  secret "pool" { runtime on }\n  secret "pool2" { runtime on }\n}\n${ROUTE}\n`;
  const missing = compiled(text, {});
  assert.ok(missing.config);
  const warnings = missing.diagnostics.map(renderDiagnostic);
  assert.is(warnings.length, 1, warnings.join("\n"));
  assert.match(warnings[0], /^Spoolfile:3:\d+: .*secret "pool": runtime on needs SPOOL_SECRET_ENCRYPTION_KEY .*is not set; spool run refuses to start or reload with it/);
  const strict = compiled(text, {}, true);
  assert.is(strict.config, null);
  assert.equal(strict.diagnostics.filter((d) => d.severity === "error").map((d) => d.code), ["env_unset"]);
  const short = Buffer.from("sixteen-byte-key").toString("base64");
  const bad = compiled(text, { SPOOL_SECRET_ENCRYPTION_KEY: short }, true);
  assert.is(bad.config, null);
  const [error] = bad.diagnostics;
  assert.is(error.code, "invalid_value");
  assert.match(renderDiagnostic(error), /decodes to 16 bytes/);
  assert.not.ok(JSON.stringify(bad.diagnostics).includes(short));
  // No runtime pool: the key is not needed, whatever it holds.
  assert.equal(compiled(`secrets { secret "s" { value raw:x } }\n`, { SPOOL_SECRET_ENCRYPTION_KEY: "junk" }, true).diagnostics, []);
});

test("reload: turning runtime on or off for a kept secret needs a restart; adding or removing a pool does not", () => {
  const staticOnly = config(`secrets { secret "a" { value raw:x } }\n`);
  const flipped = config(`secrets { secret "a" { runtime on } }\n`);
  const added = config(`secrets {\n  secret "a" { value raw:x }\n  secret "b" { runtime on }\n}\n`);
  assert.equal(restartRequiredChanges(staticOnly, flipped), ['secrets.secret "a".runtime']);
  assert.equal(restartRequiredChanges(flipped, staticOnly), ['secrets.secret "a".runtime']);
  assert.equal(restartRequiredChanges(staticOnly, added), []);
  assert.equal(restartRequiredChanges(added, staticOnly), []);
});

test.run();
