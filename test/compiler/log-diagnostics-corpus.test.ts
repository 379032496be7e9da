// A corpus of operator mistakes, each carrying a distinctive credential-like value, compiled as
// `spool run` compiles (strict secrets, a real file in a temporary directory) and rendered as its
// logs render them: every case's log line names the directive (subject) and what was expected, no
// value of the file reaches any line, and a mistake is reported once (no cascade of follow-ups).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { loadSpoolfile, logSafeDiagnostics, renderDiagnostic } from "../../compiler/index.js";
import { CORPUS } from "./log-diagnostics-corpus-cascades.js";

const test = suite("log-safe diagnostics corpus");
const dir = mkdtempSync(join(tmpdir(), "spool-corpus-"));

test("the corpus is large enough and each case's secret is in its file", () => {
  assert.ok(CORPUS.length >= 30, `${CORPUS.length} cases`);
  for (const c of CORPUS) for (const s of c.secrets) assert.ok(c.text.includes(s), `${c.name}: ${s}`);
});

for (const c of CORPUS) {
  test(c.name, () => {
    const file = join(dir, `${c.name.replace(/\W+/g, "-")}.spool`);
    writeFileSync(file, c.text);
    const result = loadSpoolfile(file, { env: { GH_SECRET: "gh-secret-value", ...c.env }, strictSecrets: true });
    const lines = logSafeDiagnostics(result.diagnostics).map(renderDiagnostic);
    const errors = result.diagnostics.filter((d) => d.severity === "error");
    assert.is(errors.length, c.errors ?? 1, `errors:\n${result.diagnostics.map(renderDiagnostic).join("\n")}`);
    const line = lines.find((l) => l.includes(`: ${c.subject}: expected ${c.expected}`));
    assert.ok(line, `no line names "${c.subject}" and "expected ${c.expected}":\n${lines.join("\n")}`);
    if (c.suggestion) assert.ok(line.endsWith(`(did you mean "${c.suggestion}"?)`), line);
    for (const l of lines) for (const s of c.secrets) assert.not.ok(l.includes(s), `${s} in ${l}`);
  });
}

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
