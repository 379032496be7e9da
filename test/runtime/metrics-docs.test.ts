import { readFileSync } from "node:fs";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createMetrics, type StoreBackend } from "../../runtime/observability/metrics.js";
import { repoPath } from "../helpers/repo.js";

// Every metric family the registry holds, on every backend, is named in docs/operations.md "Metrics"
// (in full, or in the table as `_suffix` after a full name in the same row or under a `prefix_*` wildcard), so a
// family added with a feature cannot go undocumented.
const operations = readFileSync(repoPath("docs", "operations.md"), "utf8");
const start = operations.indexOf("\n## Metrics\n");
const section = operations.slice(start, operations.indexOf("\n## ", start + 1));

function documented(name: string): boolean {
  if (section.includes(`\`${name}\``) || section.includes(`\`${name}{`)) return true;
  for (const line of section.split("\n").filter((l) => l.startsWith("| "))) {
    const full = [...line.matchAll(/`(spool_[a-z_]+?)(?:\*|\{[^`]*)?`/g)].map((m) => m[1]);
    if (full.some((f) => line.includes(`\`${f}*\``) && name.startsWith(f))) return true;
    for (const m of line.matchAll(/`(_[a-z_]+)(?:\{[^`]*\})?`/g)) {
      const suffix = m[1];
      if (name.endsWith(suffix) && full.some((f) => f.startsWith(name.slice(0, name.length - suffix.length) + "_"))) return true;
    }
  }
  return false;
}

const test = suite("metric families against docs/operations.md");

test("every family of every backend is documented", async () => {
  assert.ok(start >= 0, 'docs/operations.md has a "## Metrics" section');
  const missing = new Set<string>();
  for (const backend of ["sqlite", "memory", "postgres"] as StoreBackend[]) {
    const metrics = createMetrics({
      backend,
      version: "0.0.0",
      clock: { now: () => 0 },
      queueSnapshot: async () => ({ depth: { queued: 0, leased: 0, dead: 0 }, oldestQueuedAgeSeconds: 0, readyLagSeconds: 0, leasesActiveByRoute: {} }),
    });
    const names = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name);
    assert.ok(names.includes("spool_runtime_secret_gc_pruned_total"), backend);
    for (const name of names) if (!documented(name)) missing.add(name);
  }
  assert.equal([...missing], []);
});

test("the matcher refuses a name the page does not have", () => {
  assert.not.ok(documented("spool_made_up_total"));
  assert.not.ok(documented("spool_pull_made_up_total"));
});

test.run();
