import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { formatDuration, formatSize, formatValue } from "../../compiler/diff-values.js";
import { compileSpoolfile, diffConfigs, renderChanges, semanticChanges, type SpoolConfig } from "../../compiler/index.js";
import { repoPath } from "../helpers/repo.js";

const names = suite("config diff --semantic speaks the Spoolfile");

function ir(text: string, file = "Spoolfile"): SpoolConfig {
  const result = compileSpoolfile(text, file, { env: {} });
  assert.ok(result.config, result.diagnostics.map((d) => d.message).join("\n"));
  return result.config!;
}

/** A thing's name, not a value of it: changing it would make it another thing (removed and added), not a changed one. */
function isIdentity(owner: Record<string, unknown>, key: string): boolean {
  if ("target" in owner) return key === "target" || key === "url" || key === "program"; // a deliver target
  if ("channel" in owner) return key === "path"; // a route
  if ("maxVersions" in owner) return key === "id"; // a named secret
  return false;
}

/** Every value of the IR changed: strings get an x, numbers one more, booleans flipped. */
function perturbed(value: unknown): unknown {
  if (typeof value === "string") return `${value}x`;
  if (typeof value === "number") return value + 1;
  if (typeof value === "boolean") return !value;
  if (Array.isArray(value)) return value.map(perturbed);
  if (typeof value !== "object" || value === null) return value;
  const owner = value as Record<string, unknown>;
  return Object.fromEntries(Object.entries(owner).map(([key, v]) => [key, isIdentity(owner, key) ? v : perturbed(v)]));
}

names("every field of a fully-populated IR, once changed, is named by its directive, never by its IR field", () => {
  const file = repoPath("fixtures/diff/every-directive.spool");
  const config = ir(readFileSync(file, "utf8"), file);
  const changes = diffConfigs(config, perturbed(config) as SpoolConfig);
  const rendered = renderChanges(changes);
  for (const change of changes) {
    // A field missing from the names table is shown only as changed, under its IR name.
    assert.ok(change.before !== undefined || change.after !== undefined, `not in the names table: ${change.path}`);
    assert.not.match(change.path, /[a-z][A-Z]/, `an IR-style name: ${change.path}`);
  }
  assert.ok(changes.length > 150, `every field changed: ${changes.length} changes\n${rendered}`);
  for (const line of [
    "~ pull_api › max_batch: 50 -> 51",
    "~ pull_api › default_lease_ttl: 30s -> 30s1ms",
    "~ pull_api › sse_keepalive: 10s -> 10s1ms",
    "~ pull_api › sse_max_connection: 1h -> 1h1ms",
    "~ ingress › listen: :8080 -> :8080x",
    "~ defaults › max_body: 1mb -> 1048577",
    "~ defaults › egress › https_only: on -> off",
    "~ observability › tracing › retry › max_elapsed_time: 1m -> 1m1ms",
    "~ route /token › auth token #1: raw:(redacted) -> rawx:(redacted)",
    "~ route /push › deliver https://hooks.example.com/in › retry › max: 3 -> 4",
    "~ route /push › deliver https://hooks.example.com/in › sign › secret_selection: oldest_valid -> oldest_validx",
    "~ route /jobs › deliver exec /usr/local/bin/notify › timeout: 30s -> 30s1ms",
    "~ route /hmac › auth hmac › tolerance: 2m -> 2m1ms",
    "~ route /token › match › method: POST, PUT -> POSTx, PUTx",
    "~ route /forward › auth forward › body_limit: 8kb -> 8193",
    "~ secrets › secret \"s1\" › valid_from: \"2026-01-01T00:00:00.000Z\" -> \"2026-01-01T00:00:00.001Z\"",
  ]) {
    assert.ok(rendered.split("\n").includes(line), `${line}\nnot in\n${rendered}`);
  }
  assert.not.ok(/admin-secret|hunter2|route-token|pull-only|application\/json/.test(rendered), rendered);
});

names("values are written as the Spoolfile writes them", () => {
  assert.equal([0, 250, 5_000, 90_000, 3_600_000, 86_400_000 + 1_000].map(formatDuration), ["0", "250ms", "5s", "1m30s", "1h", "1d1s"]);
  assert.equal([512, 1_500, 65_536, 2 * 1024 ** 2, 1024 ** 3].map(formatSize), ["512", "1500", "64kb", "2mb", "1gb"]);
  assert.equal([formatValue("duration", null), formatValue("bool", true), formatValue("bool", false), formatValue("text", null)], ["off", "on", "off", "(not set)"]);
});

names("the issue's examples: a target's timeout, a pull_api setting, a target's retry, a route's size and flag", () => {
  const config = (timeout: string, batch: number, max: number, body: string, publish: string) =>
    `pull_api { auth token raw:t; max_batch ${batch} }\n/push { max_body ${body}; publish ${publish}; deliver "https://example.com/in" { timeout ${timeout}; retry exponential max ${max} } }\n`;
  const out = renderChanges(diffConfigs(ir(config("5s", 50, 5, "1mb", "on")), ir(config("10s", 100, 8, "2mb", "off"))));
  assert.is(
    out,
    [
      "~ pull_api › max_batch: 50 -> 100",
      "~ route /push › max_body: 1mb -> 2mb",
      "~ route /push › publish › enabled: on -> off",
      "~ route /push › deliver https://example.com/in › timeout: 5s -> 10s",
      "~ route /push › deliver https://example.com/in › retry › max: 5 -> 8",
    ].join("\n"),
  );
});

names("a block that appears or goes lists the fields it sets; a named thing that appears or goes is one line", () => {
  const before = 'pull_api { auth token raw:t }\n/a { pull { path /a } }\n';
  const after = 'pull_api { auth token raw:t; rate_limit { rps 5 } }\n@m { method PUT }\n/a { pull { path /a } }\n';
  assert.is(renderChanges(diffConfigs(ir(before), ir(after))), "+ pull_api › rate_limit › rps = 5\n+ pull_api › rate_limit › burst = 5\n+ @m");
  assert.is(renderChanges(diffConfigs(ir(after), ir(before))), "- pull_api › rate_limit › rps (was 5)\n- pull_api › rate_limit › burst (was 5)\n- @m");
});

names("a target renamed only behind a placeholder is one line, and its own changes still show under the name as printed", () => {
  const config = (host: string, timeout: string) => `vars { H "${host}" }\n/x { deliver "https://{vars.H}/in" { timeout ${timeout} } }\n`;
  const [before, after] = [compileSpoolfile(config("a.example.com", "5s"), "Spoolfile", { env: {} }), compileSpoolfile(config("c.example.com", "10s"), "Spoolfile", { env: {} })];
  const out = renderChanges(semanticChanges({ config: before.config!, expansions: before.expansions }, { config: after.config!, expansions: after.expansions }));
  assert.is(
    out,
    ["~ vars › H: (redacted) -> (redacted, changed)", "~ route /x › deliver https://{vars.H}/in (changed where it is not shown)", "~ route /x › deliver https://{vars.H}/in › timeout: 5s -> 10s"].join("\n"),
  );
});

names.run();
