import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile, type SpoolConfig } from "../../compiler/index.js";
import { renderDiagnostic } from "../../grammar/index.js";

function compile(text: string, env: Record<string, string> = {}): SpoolConfig {
  const result = compileSpoolfile(text, "Spoolfile", { env, readFile: (p) => (p === "token.txt" ? "  file-token\n" : (() => { throw new Error("missing"); })()) });
  assert.ok(result.config, result.diagnostics.map(renderDiagnostic).join("\n"));
  return result.config!;
}

function errorsOf(text: string, env: Record<string, string> = {}, strictSecrets = false): string[] {
  return compileSpoolfile(text, "Spoolfile", { env, strictSecrets, readFile: () => { throw new Error("missing"); } })
    .diagnostics.filter((d) => d.severity === "error")
    .map(renderDiagnostic);
}

const values = suite("compiler values");

values("a diagnostic quotes at most 200 characters of a long value, and says how long it was", () => {
  const [error] = errorsOf(`ingress { listen "${"é".repeat(5000)}" }`);
  assert.ok(error.length < 400, error);
  assert.match(error, `got "${"é".repeat(200)}"… (5000 characters)`);
});

values("a file nested too deep gets that error alone, not also a false 'the config is empty'", () => {
  const errors = errorsOf(`ingress ${"{ a ".repeat(70)}${"}".repeat(70)}`);
  assert.is(errors.length, 1, errors.join("\n"));
  assert.match(errors[0], "blocks nested more than 64 levels deep");
});

values("durations decode to milliseconds, including compound and day forms", () => {
  const config = compile("pull_api { auth token raw:t; default_lease_ttl 1h30m; max_lease_ttl 7d; default_max_wait 250ms; max_wait 30s }");
  assert.is(config.pullApi.defaultLeaseTtlMs, 5_400_000);
  assert.is(config.pullApi.maxLeaseTtlMs, 7 * 86_400_000);
  assert.is(config.pullApi.defaultMaxWaitMs, 250);
  assert.is(config.pullApi.maxWaitMs, 30_000);
});

values("sse_keepalive and sse_max_connection: durations above zero, the second also off; defaults 15s and off", () => {
  const defaults = compile("pull_api { auth token raw:t }");
  assert.equal([defaults.pullApi.sseKeepaliveMs, defaults.pullApi.sseMaxConnectionMs], [15_000, null]);
  const set = compile("pull_api { auth token raw:t; sse_keepalive 250ms; sse_max_connection 1h }");
  assert.equal([set.pullApi.sseKeepaliveMs, set.pullApi.sseMaxConnectionMs], [250, 3_600_000]);
  assert.is(compile("pull_api { auth token raw:t; sse_max_connection off }").pullApi.sseMaxConnectionMs, null);
  const [keepaliveZero] = errorsOf("pull_api { auth token raw:t; sse_keepalive 0s }");
  assert.match(keepaliveZero, /^Spoolfile:1:44: .*sse_keepalive/);
  assert.is(errorsOf("pull_api { auth token raw:t; sse_keepalive off }").length, 1, "a stream always sends keepalives");
  assert.is(errorsOf("pull_api { auth token raw:t; sse_max_connection 0s }").length, 1);
});

values("sizes are powers of 1024 and a bare number is bytes", () => {
  const config = compile("defaults { max_body 64KB; max_headers 512 }");
  assert.is(config.defaults.maxBodyBytes, 65_536);
  assert.is(config.defaults.maxHeadersBytes, 512);
  assert.is(compile("defaults { max_body 1gb }").defaults.maxBodyBytes, 1024 ** 3);
});

values("booleans accept on/off/true/false/1/0 in any case", () => {
  for (const [word, expected] of [["ON", true], ["false", false], ["1", true], ["Off", false]] as const) {
    assert.is(compile(`defaults { publish_policy { direct ${word} } }`).defaults.publishPolicy.direct, expected);
  }
});

values("secret sources resolve env, file (trimmed) and raw", () => {
  const config = compile("pull_api { auth token env:PULL; auth token file:token.txt; auth token raw:literal }", { PULL: "from-env" });
  assert.equal(config.pullApi.tokens.map((t) => [t.kind, t.value]), [["env", "from-env"], ["file", "file-token"], ["raw", "literal"]]);
});

values("enabled tracing compiles without a warning (it is built); drop_policy drop_oldest is built", () => {
  const text = 'pull_api { auth token raw:t }\n/a { pull { path /a } }\nqueue_limits { drop_policy drop_oldest }\nobservability { tracing { enabled on; collector "https://otel.example" } }\n';
  const result = compileSpoolfile(text, "Spoolfile", { env: {} });
  assert.is(result.config?.queueLimits.dropPolicy, "drop_oldest");
  assert.equal(result.diagnostics, []);
  assert.is(result.config?.observability.tracing.enabled, true);
});

values("a tracing proxy_url must be http:// (the exporter tunnels with CONNECT)", () => {
  const text = 'observability { tracing { enabled on; collector "https://otel.example"; proxy_url "https://proxy.example:3128" } }\n';
  assert.equal(errorsOf(text), ["Spoolfile:1:83: tracing: proxy_url must be an http:// proxy; the collector's TLS runs through its CONNECT tunnel"]);
});

values("an unset env secret is a warning for validate and an error for run", () => {
  const text = "pull_api { auth token env:NOPE }";
  const lenient = compileSpoolfile(text, "Spoolfile", { env: {} });
  assert.ok(lenient.config);
  assert.is(lenient.config!.pullApi.tokens[0].value, null);
  assert.match(renderDiagnostic(lenient.diagnostics[0]), /Spoolfile:1:23: warning: .*NOPE is not set/);
  assert.equal(errorsOf(text, {}, true), ["Spoolfile:1:23: pull_api auth token: environment variable NOPE is not set"]);
});

values("placeholders resolve inside words and quoted strings, with defaults and vars", () => {
  const config = compile(
    'vars { HOST "api.internal"; BASE "https://{vars.HOST}" }\n/a { deliver {vars.BASE}/in/{env.SUFFIX} { header "X-A" "{$MISSING:fallback}" } }',
    { SUFFIX: "orders" },
  );
  const mode = config.routes[0].mode;
  assert.is(mode.kind, "deliver");
  if (mode.kind === "deliver" && mode.targets[0].kind === "http") {
    assert.is(mode.targets[0].url, "https://api.internal/in/orders");
    assert.equal(mode.targets[0].headers, [["X-A", "fallback"]]);
  }
  assert.equal(config.vars, { HOST: "api.internal", BASE: "https://api.internal" });
});

values("route paths are cleaned and every route gets the defaults it does not override", () => {
  const config = compile("pull_api { auth token raw:t }\ndefaults { max_body 1mb }\n/a//b/ { max_headers 1kb; pull { path /ab } }");
  const route = config.routes[0];
  assert.is(route.path, "/a/b");
  assert.is(route.maxBodyBytes, 1024 * 1024);
  assert.is(route.maxHeadersBytes, 1024);
  assert.equal(route.publish, { enabled: true, direct: true, managed: true });
});

values("deliver targets inherit defaults.deliver and keep their order for fan-out", () => {
  const config = compile('defaults { egress { https_only off }; deliver { timeout 3s; retry exponential max 2 } }\n/a { deliver "http://a.example/x" {}; deliver "http://b.example/y" { timeout 1s } }');
  const mode = config.routes[0].mode;
  assert.is(mode.kind, "deliver");
  if (mode.kind !== "deliver") return;
  assert.equal(mode.targets.map((t) => [t.target, t.timeoutMs, t.retry.maxRetries]), [["http://a.example/x", 3000, 2], ["http://b.example/y", 1000, 2]]);
  assert.is(mode.concurrency, 20);
});

values("errors are all collected, not just the first", () => {
  const errors = errorsOf("pull_api { max_batch x; default_lease_ttl y; listen z }\nbogus {}");
  assert.is(errors.length, 4);
  assert.ok(errors.every((e) => /^Spoolfile:\d+:\d+: /.test(e)));
});

values("a default lease TTL above an explicit max is an error even when the default is implicit", () => {
  assert.equal(errorsOf("pull_api { auth token raw:t; max_lease_ttl 10s }"), ["Spoolfile:1:30: pull_api: default_lease_ttl (30000ms) is above max_lease_ttl (10000ms)"]);
  assert.equal(errorsOf("pull_api { auth token raw:t; max_lease_ttl 1m }"), []);
});

values("default_max_wait off means no wait, as 0 does (off or 0 is disabled or zero)", () => {
  for (const value of ["off", "0"]) {
    const result = compileSpoolfile(`pull_api { auth token raw:t; default_max_wait ${value} }\n`, "Spoolfile", { env: {} });
    assert.equal(result.diagnostics.filter((d) => d.severity === "error"), [], value);
    assert.is(result.config?.pullApi.defaultMaxWaitMs, 0, value);
  }
});

values("a loopback admin listener needs no token; any other address does", () => {
  assert.equal(errorsOf("admin_api { listen [::1]:2019 }"), []);
  assert.equal(errorsOf("admin_api { listen localhost:2019 }"), []);
  assert.is(errorsOf("admin_api { listen :2019 }").length, 1);
  assert.equal(errorsOf("admin_api { listen :2019; auth token raw:x }"), []);
});

values("an IPv4-mapped loopback admin listener is loopback; a mapped other address or NAT64 is not", () => {
  assert.equal(errorsOf("admin_api { listen [::ffff:127.0.0.1]:18089 }"), []);
  assert.equal(errorsOf("admin_api { listen [::ffff:7f00:1]:18089 }"), []);
  assert.equal(errorsOf("admin_api { listen 127.0.0.2:18089 }"), []);
  assert.is(errorsOf("admin_api { listen [::ffff:10.0.0.1]:18089 }").length, 1);
  assert.is(errorsOf("admin_api { listen [64:ff9b::7f00:1]:18089 }").length, 1);
});

values("the instance backend comes from the routes that name one, sqlite otherwise", () => {
  assert.is(compile("pull_api { auth token raw:t }\n/a { pull { path /a } }").backend, "sqlite");
  const config = compile("pull_api { auth token raw:t }\n/a { queue memory; pull { path /a } }\n/b { pull { path /b } }");
  assert.is(config.backend, "memory");
  assert.equal(config.routes.map((r) => r.backend), ["memory", "memory"]);
});

values("route matching order: a later route under an earlier route with a match is not shadowed", () => {
  assert.equal(errorsOf('pull_api { auth token raw:t }\n/a { match { header "X" "1" }; pull { path /a } }\n/a/b { pull { path /b } }'), []);
  assert.equal(errorsOf("pull_api { auth token raw:t }\n/a { pull { path /a } }\n/a-b { pull { path /b } }"), [], "segment-bounded: /a does not cover /a-b");
});

values("file: secrets and {file.X} refuse special files and oversized ones instead of hanging", () => {
  const dir = mkdtempSync(join(tmpdir(), "spool-secret-files-"));
  try {
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const big = join(dir, "big");
    writeFileSync(big, Buffer.alloc(1024 * 1024 + 1, 97));
    // The diagnostic says why, so an operator knows what to fix.
    const reasons: [string, string][] = [
      ["/dev/zero", "it is not a regular file"],
      [fifo, "it is not a regular file"],
      [big, "it is larger than 1048576 bytes"],
      [join(dir, "missing"), "no such file"],
    ];
    for (const [path, reason] of reasons) {
      const token = compileSpoolfile(`pull_api {\n  auth token file:${path}\n}\n`, join(dir, "Spoolfile"), { env: {} });
      assert.equal(token.diagnostics.map((d) => [d.severity, d.span.line, d.message]), [["warning", 2, `pull_api auth token: cannot read secret file "${path}": ${reason}; spool run refuses to start or reload with it`]], path);
      assert.equal(token.diagnostics.map((d) => [d.code, d.subject, d.refusedByRun]), [["file_unreadable", "pull_api › auth", true]], path);
      const placeholder = compileSpoolfile(`vars {\n  K {file.${path}}\n}\n`, join(dir, "Spoolfile"), { env: {} });
      assert.equal(placeholder.diagnostics.map((d) => [d.severity, d.span.line, d.message.endsWith(`: ${reason}`)]), [["error", 2, true]], path);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

values("vars that repeat vars cannot expand without bound: a positioned error past 2 Mi characters", () => {
  const names = "ABCDEFGHI";
  const lines = ["vars {", "  A xxxxxxxxxxxxxxxx"];
  for (let i = 1; i < names.length; i++) lines.push(`  ${names[i]} ${`{vars.${names[i - 1]}}`.repeat(16)}`);
  lines.push("}", '/a {\n  deliver "https://example.com/{vars.I}"\n}');
  const result = compileSpoolfile(lines.join("\n") + "\n", "Spoolfile", { env: {} });
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  assert.equal(errors.map((d) => [d.span.line, d.message]), [[7, "the value is longer than 2097152 characters once its placeholders are expanded"]]);
});

values("a chain of vars a thousand deep is a positioned error, not a stack overflow; a hundred deep compiles", () => {
  const chain = (depth: number) =>
    ["vars {", ...Array.from({ length: depth }, (_, i) => `  V${i} "{vars.V${i + 1}}"`), `  V${depth} x`, "}", '/a {\n  deliver "https://{vars.V0}.example.com"\n}'].join("\n") + "\n";
  const deep = compileSpoolfile(chain(1000), "Spoolfile", { env: {} });
  const errors = deep.diagnostics.filter((d) => d.severity === "error");
  assert.equal(errors.map((d) => [d.span.line, d.message]), [[103, "{vars.V101} is nested too deep: a var may refer to vars that refer to vars at most 100 levels down"]]);
  const fine = compileSpoolfile(chain(100), "Spoolfile", { env: {} });
  assert.equal(fine.diagnostics.filter((d) => d.severity === "error"), []);
  const mode = fine.config?.routes[0].mode;
  assert.is(mode?.kind === "deliver" ? mode.targets[0].target : undefined, "https://x.example.com");
});

values("a backslash before U+2028 or U+2029 inside a quoted string is kept literally, like any other", () => {
  for (const separator of ["\u2028", "\u2029"]) {
    const result = compileSpoolfile(`/a {\n  auth basic "u" "p\\${separator}"\n  deliver "https://example.com/a"\n}\n`, "Spoolfile", { env: {} });
    assert.equal(result.diagnostics.filter((d) => d.severity === "error"), [], JSON.stringify(separator));
  }
});

values("an env: name taken from a placeholder is quoted in the diagnostic, on one line", () => {
  const result = compileSpoolfile("pull_api {\n  auth token env:{$V}\n}\n", "Spoolfile", { env: { V: "line1\nline2" } });
  const [error] = result.diagnostics.filter((d) => d.severity === "error");
  assert.ok(error && !error.message.includes("\n"), error?.message);
  assert.match(error.message, /"line1\\nline2" is not a valid environment variable name/);
});

values.run();
