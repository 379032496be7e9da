import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { compileSpoolfile } from "../../compiler/index.js";
import { DEFAULTS } from "../../compiler/defaults.js";
import { parseDurationMs } from "../../compiler/syntax.js";
import { BLOCKS, DIRECTIVES, directivesIn, findDirective, referenceMarkdown, type DirectiveInfo } from "../../compiler/reference.js";
import { repoPath } from "../helpers/repo.js";

// The directive reference (compiler/reference.ts) is checked against the compiler itself: in every
// block, a directive it does not know makes the compiler list the names it accepts, and a wrong
// value of a closed set makes it list the values; both must be the table's rows. The docs section is
// the table's generated text (docs/decisions.md D142).
const reference = suite("directive reference");

/** The statements that open `key`, from the top level: the first way the table reaches it. */
function pathTo(key: string): string[] {
  if (key === "top") return [];
  if (key === "route") return ["/probe"];
  const starts: [string, string[]][] = [["top", []], ["route", ["/probe"]], ["matcher", ["@probe"]]];
  if (key === "matcher") return ["@probe"];
  const queue = [...starts];
  const seen = new Set<string>(starts.map(([k]) => k));
  while (queue.length > 0) {
    const [at, path] = queue.shift()!;
    for (const row of directivesIn(at)) {
      if (!row.opens || seen.has(row.opens)) continue;
      const next = [...path, [row.name, row.sub, row.probeArgs].filter(Boolean).join(" ")];
      if (row.opens === key) return next;
      seen.add(row.opens);
      queue.push([row.opens, next]);
    }
  }
  throw new Error(`no row opens block ${key}`);
}

function inBlock(key: string, statement: string): string {
  let text = statement;
  for (const opener of pathTo(key).reverse()) text = `${opener} {\n${text}\n}`;
  return `${text}\n`;
}

function namesAccepted(key: string): string[] {
  const result = compileSpoolfile(inBlock(key, "zz_probe_directive 1"), "probe.spool");
  const unknown = result.diagnostics.find((d) => d.code === "unknown_directive" && d.found === "zz_probe_directive");
  assert.ok(unknown, `block ${key}: the compiler did not report the probe: ${result.diagnostics.map((d) => d.message).join("; ")}`);
  const list = /one of: (.*)$/.exec(unknown.expected)?.[1];
  assert.ok(list, unknown.expected);
  return list.split(", ").sort();
}

reference("every block's rows are exactly the directives the compiler accepts there", () => {
  for (const block of BLOCKS) {
    const rows = directivesIn(block.key);
    const names = [...new Set(rows.map((r) => r.name))].filter((n) => !(block.key === "top" && ["inbound", "outbound", "internal"].includes(n))).sort();
    assert.equal(names, namesAccepted(block.key), `block ${block.key}: give each directive the compiler accepts a row in compiler/reference.ts (then npm run build and node scripts/directive-reference.mjs)`);
  }
});

reference("every block a row opens is a block of the table, and every block is reachable", () => {
  const keys = new Set(BLOCKS.map((b) => b.key));
  for (const row of DIRECTIVES) if (row.opens) assert.ok(keys.has(row.opens), `${row.block} ${row.name} opens unknown ${row.opens}`);
  for (const block of BLOCKS) pathTo(block.key);
});

function valuesExpected(row: DirectiveInfo): { code: string; values: string[] } {
  const statement = [row.name, row.sub, "zz_probe_value"].filter(Boolean).join(" ");
  const result = compileSpoolfile(inBlock(row.block, statement), "probe.spool");
  const found = result.diagnostics.find((d) => (d.code === "expected_enum" || d.code === "expected_bool") && d.found === "zz_probe_value");
  assert.ok(found, `${row.block} ${statement}: ${result.diagnostics.map((d) => d.message).join("; ")}`);
  const list = /^one of (.*)$/.exec(found.expected)?.[1];
  return { code: found.code, values: list ? list.split(", ").sort() : [found.expected.split(" ")[0]] };
}

reference("a row's values are the values the compiler accepts (closed sets and on|off)", () => {
  for (const row of DIRECTIVES.filter((r) => r.values)) {
    const expected = valuesExpected(row);
    if (row.values!.join() === "on,off") assert.is(expected.code, "expected_bool", `${row.block} ${row.name}`);
    else assert.equal(expected.values, [...row.values!].sort(), `${row.block} ${row.name}`);
  }
});

reference("docs/spoolfile.md's directive reference is the table's generated text", () => {
  const docs = readFileSync(repoPath("docs", "spoolfile.md"), "utf8");
  const match = /<!-- directive-reference:start[^\n]*-->\n([\s\S]*?)<!-- directive-reference:end -->/.exec(docs);
  assert.ok(match, "docs/spoolfile.md has no directive-reference markers");
  assert.fixture(match[1], `\n${referenceMarkdown()}`, "regenerate it: npm run build && node scripts/directive-reference.mjs");
});

reference("the tracing rows' defaults are the compiler's (they once said \"none\" and \"validated only\")", () => {
  const retry = DEFAULTS.tracing.retry;
  const expected: [string, number][] = [
    ["initial_interval", retry.initialIntervalMs],
    ["max_interval", retry.maxIntervalMs],
    ["max_elapsed_time", retry.maxElapsedTimeMs],
  ];
  for (const [name, ms] of expected) {
    const row = findDirective("tracing_retry", name);
    assert.ok(row, name);
    assert.is(parseDurationMs(row.default), ms, `tracing retry ${name}: ${row.default}`);
  }
  assert.is(parseDurationMs(findDirective("tracing", "timeout")!.default), DEFAULTS.tracing.timeoutMs);
  // url_path not written is the collector URL's own path (DEFAULTS.tracing.urlPath is null), not always /v1/traces.
  assert.is(DEFAULTS.tracing.urlPath, null);
  assert.match(findDirective("tracing", "url_path")!.default, /collector URL's path/);
});

reference("no block or row describes a built feature as unbuilt", () => {
  const texts = [...BLOCKS.map((b) => `${b.key}: ${b.about}`), ...DIRECTIVES.map((r) => `${r.block} ${r.name}: ${r.description}`)];
  const stale = texts.filter((t) => /validated only|not built|no exporter|not implemented|no effect yet/i.test(t));
  assert.equal(stale, []);
});

reference.run();
